import { useEffect, useState } from "react";
import type { Client, Resource } from "../api/client";
import { useSession } from "./session";

// What the signed-in user may do, asked of the server (SelfSubjectAccessReview),
// so that a view offers only what RBAC allows. The server checks again on the
// request itself: hiding a button is a courtesy, not the control.

export interface Access {
  verb: string;
  resource: Pick<Resource, "group" | "plural">;
  namespace?: string;
  name?: string;
  subresource?: string;
}

const cache = new Map<string, Promise<boolean>>();
const keyOf = (a: Access) =>
  [a.verb, a.resource.group, a.resource.plural, a.subresource ?? "", a.namespace ?? "", a.name ?? ""].join("|");

export function clearAccessCache() {
  cache.clear();
}

export function can(client: Client, a: Access): Promise<boolean> {
  const k = keyOf(a);
  let p = cache.get(k);
  if (!p) {
    p = client
      .post<{ status?: { allowed?: boolean } }>("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: {
          resourceAttributes: {
            verb: a.verb,
            group: a.resource.group,
            resource: a.resource.plural,
            subresource: a.subresource,
            namespace: a.namespace,
            name: a.name,
          },
        },
      })
      .then((r) => r.status?.allowed === true)
      .catch(() => {
        cache.delete(k);
        return false;
      });
    cache.set(k, p);
  }
  return p;
}

// undefined while the server is asked, then true or false.
export function useCan(a: Access | null): boolean | undefined {
  const { client, identity } = useSession();
  const [allowed, setAllowed] = useState<boolean | undefined>(undefined);
  const k = a ? keyOf(a) : "";
  useEffect(() => {
    if (!a) return;
    let live = true;
    setAllowed(undefined);
    can(client, a).then((v) => live && setAllowed(v));
    return () => {
      live = false;
    };
  }, [client, k, identity?.username]); // eslint-disable-line react-hooks/exhaustive-deps
  return allowed;
}
