import type { KubeObject } from "../../api/client";

// Usage and cost from UsageRecords, computed as `tessera report usage` does
// (src/cli/commands/usage_report.cc): GPU-hours are gpuMilli x the record's overlap
// with the window (an open record counts to now); used GPU-hours are the window's
// share of spec.usedGpuMilliSeconds, measured over [start, usedUpdatedAt]; cost is
// GPU-hours x the flavor's tessera.dev/price-per-gpu-hour.

export type GroupBy = "team" | "flavor" | "user" | "queue";

export interface UsageRow {
  key: string;
  gpuMilliSeconds: number;
  usedMilliSeconds: number;
  cost: number;
  admissions: number;
}

export const gpuHours = (milliSeconds: number) => milliSeconds / 3.6e6;

export function pricesOf(flavors: KubeObject[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const f of flavors) {
    const text = f.metadata.annotations?.["tessera.dev/price-per-gpu-hour"];
    const p = text === undefined || text.trim() === "" ? NaN : Number(text);
    if (Number.isFinite(p) && p >= 0) m.set(f.metadata.name, p);
  }
  return m;
}

const keyOf = (r: KubeObject, by: GroupBy): string =>
  (by === "team"
    ? r.metadata.namespace
    : by === "flavor"
      ? r.spec?.flavor
      : by === "user"
        ? r.spec?.user
        : r.spec?.clusterQueue) || "<none>";

// One record's share of [since, until): null when it does not overlap.
export function recordShare(r: KubeObject, since: number, until: number, now: number) {
  const start = Date.parse(r.spec?.start ?? "");
  if (Number.isNaN(start)) return null;
  const end = r.spec?.end ? Date.parse(r.spec.end) : now;
  if (Number.isNaN(end)) return null;
  const from = Math.max(start, since);
  const to = Math.min(end, until);
  if (to <= from) return null;
  const milli = Number(r.spec?.gpuMilli ?? 0);
  const gpuMilliSeconds = Math.floor((milli * (to - from)) / 1000);
  const measured = r.spec?.usedUpdatedAt ? Date.parse(r.spec.usedUpdatedAt) : NaN;
  const span = (Number.isNaN(measured) ? end : measured) - start;
  let used = 0;
  if (span > 0) {
    const inWindow = Math.max(0, Math.min(to, start + span) - from);
    used = Math.floor((Number(r.spec?.usedGpuMilliSeconds ?? 0) * inWindow) / span);
  }
  return { gpuMilliSeconds, usedMilliSeconds: used, milli };
}

export function summarize(
  records: KubeObject[],
  prices: Map<string, number>,
  since: number,
  until: number,
  now: number,
  by: GroupBy,
): { rows: UsageRow[]; total: UsageRow; unpriced: string[] } {
  const rows = new Map<string, UsageRow>();
  const total: UsageRow = { key: "TOTAL", gpuMilliSeconds: 0, usedMilliSeconds: 0, cost: 0, admissions: 0 };
  const unpriced = new Set<string>();
  for (const r of records) {
    const s = recordShare(r, since, until, now);
    if (!s) continue;
    const flavor = r.spec?.flavor ?? "";
    const price = prices.get(flavor);
    if (price === undefined && s.milli > 0) unpriced.add(flavor || "<none>");
    const cost = price === undefined ? 0 : (s.gpuMilliSeconds / 3.6e6) * price;
    const key = keyOf(r, by);
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { key, gpuMilliSeconds: 0, usedMilliSeconds: 0, cost: 0, admissions: 0 }));
    for (const x of [row, total]) {
      x.gpuMilliSeconds += s.gpuMilliSeconds;
      x.usedMilliSeconds += s.usedMilliSeconds;
      x.cost += cost;
      x.admissions += 1;
    }
  }
  return { rows: [...rows.values()].sort((a, b) => a.key.localeCompare(b.key)), total, unpriced: [...unpriced].sort() };
}

// GPU-hours allocated and used per bucket of `bucketMs` over [since, until).
export function buckets(records: KubeObject[], since: number, until: number, now: number, bucketMs: number) {
  const n = Math.max(1, Math.ceil((until - since) / bucketMs));
  const t: number[] = [];
  const allocated: number[] = [];
  const used: number[] = [];
  for (let i = 0; i < n; i++) {
    const from = since + i * bucketMs;
    const to = Math.min(until, from + bucketMs);
    let a = 0;
    let u = 0;
    for (const r of records) {
      const s = recordShare(r, from, to, now);
      if (!s) continue;
      a += s.gpuMilliSeconds;
      u += s.usedMilliSeconds;
    }
    t.push(from / 1000);
    allocated.push(gpuHours(a));
    used.push(gpuHours(u));
  }
  return { t, allocated, used };
}

export function toCsv(by: GroupBy, rows: UsageRow[]): string {
  const lines = [`${by},gpu_hours,used_gpu_hours,cost,admissions`];
  const q = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  for (const r of rows)
    lines.push(
      [q(r.key), gpuHours(r.gpuMilliSeconds).toFixed(6), gpuHours(r.usedMilliSeconds).toFixed(6), r.cost.toFixed(6), r.admissions].join(","),
    );
  return lines.join("\n") + "\n";
}
