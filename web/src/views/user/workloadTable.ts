import type { KubeObject } from "../../api/client";
import { summarize, type Summary } from "./workload";

// The Workloads table's order: what it filters and sorts by, kept cheap for
// thousands of rows (the view draws only the rows on screen).

export type Col = "name" | "kind" | "state" | "queue" | "gpus" | "where" | "age" | "cost";
export type Usage = Map<string, { gpuSeconds: number; flavor: string }[]> | undefined;
export type Prices = Map<string, number> | null | undefined;

// GPU-hours (and cost, when the prices are known) a workload has held so far.
export function spent(name: string, usage: Usage, prices: Prices): { gpuHours?: number; cost?: number } {
  const records = usage?.get(name);
  if (!records) return {};
  const gpuHours = records.reduce((a, r) => a + r.gpuSeconds, 0) / 3600;
  if (!prices) return { gpuHours };
  return { gpuHours, cost: records.reduce((a, r) => a + (r.gpuSeconds / 3600) * (prices.get(r.flavor) ?? 0), 0) };
}

// Summaries per object: an update re-reads only the objects that changed, and
// the default order (by age) reads none: only the rows on screen are summarised.
const summaries = new WeakMap<KubeObject, Summary>();
export function summaryOf(w: KubeObject): Summary {
  let s = summaries.get(w);
  if (!s) summaries.set(w, (s = summarize(w)));
  return s;
}

function sortValue(w: KubeObject, c: Col, usage: Usage, prices: Prices): string | number {
  switch (c) {
    case "name":
      return w.metadata.name;
    case "age":
      return -Date.parse(w.metadata.creationTimestamp || "0");
    case "cost": {
      const s = spent(w.metadata.name, usage, prices);
      return s.cost ?? s.gpuHours ?? 0;
    }
  }
  const r = summaryOf(w);
  switch (c) {
    case "kind":
      return r.owner.kind;
    case "gpus":
      return r.milliGpu;
    case "queue":
      return `${r.queue}/${String(r.position ?? 0).padStart(8, "0")}`;
    case "state":
      return `${r.state} ${r.reason}`;
    case "where":
      return r.where;
  }
}

// The objects in the table's order: those the filter keeps (by name, owner, state
// or reason), sorted by the column, then by name; each sort key is computed once.
export function tableOrder(
  items: KubeObject[],
  filter: string,
  sort: { col: Col; desc: boolean },
  usage: Usage,
  prices: Prices,
): KubeObject[] {
  const f = filter.trim().toLowerCase();
  const keyed: { w: KubeObject; k: string | number }[] = [];
  for (const w of items) {
    if (f) {
      const s = summaryOf(w);
      if (!`${s.name} ${s.owner.name} ${s.state} ${s.reason}`.toLowerCase().includes(f)) continue;
    }
    keyed.push({ w, k: sortValue(w, sort.col, usage, prices) });
  }
  const dir = sort.desc ? -1 : 1;
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.w.metadata.name < b.w.metadata.name ? -1 : 1) * dir);
  return keyed.map((x) => x.w);
}
