import type { Client } from "../api/client";

// Who is signed in. The token lives in sessionStorage (this tab only, gone when
// it closes), never in a URL or in localStorage. No React here: src/early.ts uses
// this before the app's code has loaded.
export interface Identity {
  username: string;
  groups: string[];
}

export const TOKEN_KEY = "tessera.token";

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export async function whoAmI(client: Client): Promise<Identity> {
  const review = await client.post<{ status?: { userInfo?: { username?: string; groups?: string[] } } }>(
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  );
  const u = review.status?.userInfo ?? {};
  return { username: u.username ?? "", groups: u.groups ?? [] };
}
