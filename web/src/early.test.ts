import { afterEach, describe, expect, it, vi } from "vitest";
import { Client } from "./api/client";
import { K } from "./api/kinds";
import { whoAmI } from "./auth/token";
import { bootFetch, workloadsRoute } from "./early";
import bootJs from "../public/boot.js?raw";

// public/boot.js, run as the page would: what it sends, and for which URLs.
function runBoot(pathname: string, token: string | null) {
  const sent: { url: string; init: RequestInit }[] = [];
  const page: Record<string, unknown> = {
    document: { currentScript: { src: "http://host/ui/boot.js" } },
    location: { pathname },
    sessionStorage: { getItem: (k: string) => (k === "tessera.token" ? token : null) },
    fetch: (url: string, init: RequestInit) => {
      sent.push({ url, init });
      return Promise.resolve(new Response(JSON.stringify({ status: { userInfo: { username: "alice" } }, items: [], metadata: {} })));
    },
  };
  page.window = page;
  new Function("window", "document", "location", "sessionStorage", "fetch", bootJs)(
    page,
    page.document,
    page.location,
    page.sessionStorage,
    page.fetch,
  );
  return { sent, boot: page.__tesseraBoot as { token: string; started: Record<string, Promise<Response>> } | undefined };
}

afterEach(() => vi.unstubAllGlobals());

describe("boot.js and early.ts", () => {
  it("boot.js sends nothing without a stored token", () => {
    const { sent, boot } = runBoot("/ui/ns/team-nlp/workloads", null);
    expect(sent).toEqual([]);
    expect(boot).toBeUndefined();
  });

  it("the app's own requests for the sign-in check and the list are answered by boot.js's, once", async () => {
    const { sent, boot } = runBoot("/ui/ns/team-nlp/workloads", "tok");
    expect(sent.map((s) => s.url)).toHaveLength(2);
    expect(sent.every((s) => new Headers(s.init.headers).get("Authorization") === "Bearer tok")).toBe(true);
    const later = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", later);
    const client = new Client(() => "tok", "", bootFetch("tok", boot));
    expect(await whoAmI(client)).toEqual({ username: "alice", groups: [] });
    await client.list(K.workloads, "team-nlp");
    expect(later).not.toHaveBeenCalled();
    // Taken: asked again, they go to the server.
    await client.list(K.workloads, "team-nlp");
    expect(later).toHaveBeenCalledTimes(1);
  });

  it("boot.js's answers are not used for another token, and other pages start only the check", async () => {
    const { boot } = runBoot("/ui/ns/team-nlp/workloads", "tok");
    const later = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", later);
    await new Client(() => "other", "", bootFetch("other", boot)).list(K.workloads, "team-nlp");
    expect(later).toHaveBeenCalledTimes(1);
    expect(runBoot("/ui/admin/fleet", "tok").sent).toHaveLength(1);
    expect(runBoot("/ui/ns/team-nlp/launch", "tok").sent).toHaveLength(1);
  });

  it("both know the Workloads route alike", () => {
    for (const path of ["/ui/ns/team-nlp/workloads", "/ui/ns/a/workloads/", "/ui/ns/a/workloads/x", "/ui/ns/a/launch"]) {
      expect(runBoot(path, "tok").sent.length === 2).toBe(workloadsRoute.test(path));
    }
  });
});
