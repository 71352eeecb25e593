import { useEffect, useState } from "react";
import type { Client, KubeObject } from "../../api/client";
import { resourceOf } from "../../api/kinds";

// Creating what a form made: a dry run first (every check, nothing stored), then
// the create; the path of the new object's page.
export async function submitObject(client: Client, ns: string, obj: KubeObject): Promise<string> {
  const r = resourceOf(obj.apiVersion, obj.kind);
  if (!r) throw new Error(`the portal does not know ${obj.apiVersion ?? "?"} ${obj.kind ?? "?"}: submit it with the CLI`);
  const body = { ...obj, metadata: { ...obj.metadata, namespace: r.namespaced ? ns : undefined } };
  await client.create(r, ns, body, true);
  const created = await client.create(r, ns, body);
  return `/ns/${ns}/${r.plural === "jobs" && r.group !== "batch" ? "workloads" : r.plural}/${created.metadata.name}`;
}

// Words of a command line, with "quotes" and 'quotes'.
export function splitWords(s: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(s); m; m = re.exec(s)) out.push(m[1]?.replace(/\\(.)/g, "$1") ?? m[2] ?? m[3]);
  return out;
}

export function useDebounced<T>(value: T, ms = 300): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}
