import { describe, expect, it } from "vitest";
import { buckets, pricesOf, summarize, toCsv } from "./usage";

const H = 3600_000;
const rec = (ns: string, flavor: string, milli: number, start: number, end?: number, used = 0, usedAt?: number) => ({
  metadata: { name: `${ns}-${start}`, namespace: ns },
  spec: {
    flavor,
    gpuMilli: milli,
    user: "alice",
    clusterQueue: ns,
    start: new Date(start).toISOString(),
    end: end === undefined ? undefined : new Date(end).toISOString(),
    usedGpuMilliSeconds: used,
    usedUpdatedAt: usedAt === undefined ? undefined : new Date(usedAt).toISOString(),
  },
});

describe("usage as tessera report usage computes it", () => {
  const prices = pricesOf([
    { metadata: { name: "h100", annotations: { "tessera.dev/price-per-gpu-hour": "2.50" } } },
    { metadata: { name: "cheap" } },
  ]);
  it("counts the overlap with the window, the share of used time, and the flavor's price", () => {
    const t0 = Date.UTC(2026, 11, 1);
    // 2 GPUs for 4 h, of which 2 h inside the window; used half the time.
    const r = rec("team-nlp", "h100", 2000, t0, t0 + 4 * H, 4000 * 3600, t0 + 4 * H); // milli-GPU-seconds: 4 GPU-hours
    const s = summarize([r], prices, t0 + 2 * H, t0 + 10 * H, t0 + 10 * H, "team");
    expect(s.rows).toHaveLength(1);
    expect(s.total.gpuMilliSeconds / 3.6e6).toBeCloseTo(4);
    expect(s.total.usedMilliSeconds / 3.6e6).toBeCloseTo(2);
    expect(s.total.cost).toBeCloseTo(10);
    expect(s.unpriced).toEqual([]);
  });
  it("counts an open record to now and names unpriced flavors", () => {
    const t0 = Date.UTC(2026, 11, 1);
    const s = summarize([rec("a", "cheap", 500, t0)], prices, t0, t0 + 10 * H, t0 + 2 * H, "flavor");
    expect(s.rows[0].key).toBe("cheap");
    expect(s.total.gpuMilliSeconds / 3.6e6).toBeCloseTo(1);
    expect(s.unpriced).toEqual(["cheap"]);
    expect(toCsv("flavor", s.rows)).toBe("flavor,gpu_hours,used_gpu_hours,cost,admissions\ncheap,1.000000,0.000000,0.000000,1\n");
  });
  it("splits GPU-hours into buckets", () => {
    const t0 = Date.UTC(2026, 11, 1);
    const b = buckets([rec("a", "h100", 1000, t0 + H / 2, t0 + 2 * H)], t0, t0 + 3 * H, t0 + 3 * H, H);
    expect(b.allocated.map((x) => +x.toFixed(3))).toEqual([0.5, 1, 0]);
  });
});
