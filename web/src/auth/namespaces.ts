import { useEffect, useState } from "react";
import { K } from "../api/kinds";
import type { Client } from "../api/client";
import { can } from "./rbac";
import type { Identity } from "./session";
import { useSession } from "./session";

// The namespaces the user works in. A platform admin may list them all; a data
// scientist usually may not (namespaces are cluster-scoped), so the picker offers
// the namespaces named like the user's groups where the server says they may list
// workloads, those they opened before, and any they type.

const REMEMBERED = "tessera.namespaces";

export function remembered(): string[] {
  try {
    return JSON.parse(localStorage.getItem(REMEMBERED) ?? "[]") as string[];
  } catch {
    return [];
  }
}

export function remember(ns: string) {
  const list = [ns, ...remembered().filter((n) => n !== ns)].slice(0, 20);
  localStorage.setItem(REMEMBERED, JSON.stringify(list));
}

export async function visibleNamespaces(client: Client, id: Identity): Promise<string[]> {
  try {
    const list = await client.list(K.namespaces);
    return list.items.map((n) => n.metadata.name).sort();
  } catch {
    // Not allowed to list them: ask about the likely ones.
  }
  const candidates = new Set<string>([
    ...id.groups.filter((g) => !g.startsWith("system:")),
    ...remembered(),
  ]);
  const checks = await Promise.all(
    [...candidates].map(async (ns) => ((await can(client, { verb: "list", resource: K.workloads, namespace: ns })) ? ns : null)),
  );
  return checks.filter((n): n is string => n !== null).sort();
}

export function useNamespaces(): { namespaces: string[]; loading: boolean } {
  const { client, identity } = useSession();
  const [state, setState] = useState<{ namespaces: string[]; loading: boolean }>({ namespaces: [], loading: true });
  useEffect(() => {
    if (!identity) return;
    let live = true;
    visibleNamespaces(client, identity).then((namespaces) => live && setState({ namespaces, loading: false }));
    return () => {
      live = false;
    };
  }, [client, identity]);
  return state;
}
