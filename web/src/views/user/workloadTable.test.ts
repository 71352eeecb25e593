import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/client";
import { spent, summaryOf, tableOrder } from "./workloadTable";

const wl = (name: string, created: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  metadata: { name, creationTimestamp: created },
  spec: { queueName: "default", podSets: [] },
  ...extra,
});
const admitted = { status: { conditions: [{ type: "Admitted", status: "True", reason: "Admitted" }] } };
const inactive = { spec: { active: false, queueName: "default", podSets: [] } };
const items = [
  wl("b", "2026-12-03T10:00:00Z", admitted),
  wl("a", "2026-12-03T11:00:00Z"),
  wl("c", "2026-12-03T10:00:00Z", inactive),
];
const names = (xs: KubeObject[]) => xs.map((w) => w.metadata.name);

describe("the Workloads table's order", () => {
  it("is newest first by default, then by name; and by any column, either way", () => {
    expect(names(tableOrder(items, "", { col: "age", desc: false }, undefined, undefined))).toEqual(["a", "b", "c"]);
    expect(names(tableOrder(items, "", { col: "age", desc: true }, undefined, undefined))).toEqual(["c", "b", "a"]);
    expect(names(tableOrder(items, "", { col: "name", desc: true }, undefined, undefined))).toEqual(["c", "b", "a"]);
    expect(names(tableOrder(items, "", { col: "state", desc: false }, undefined, undefined))).toEqual(["b", "c", "a"]);
  });

  it("filters by name, owner, state or reason, in any case", () => {
    expect(names(tableOrder(items, " ADMITTED ", { col: "name", desc: false }, undefined, undefined))).toEqual(["b"]);
    expect(names(tableOrder(items, "inactive", { col: "name", desc: false }, undefined, undefined))).toEqual(["c"]);
    expect(tableOrder(items, "nothing", { col: "name", desc: false }, undefined, undefined)).toEqual([]);
  });

  it("sorts by cost, or GPU-hours without prices", () => {
    const usage = new Map([
      ["a", [{ gpuSeconds: 7200, flavor: "h100" }]],
      ["c", [{ gpuSeconds: 3600, flavor: "a10" }]],
    ]);
    const prices = new Map([
      ["h100", 1],
      ["a10", 5],
    ]);
    expect(spent("a", usage, prices)).toEqual({ gpuHours: 2, cost: 2 });
    expect(spent("a", usage, null)).toEqual({ gpuHours: 2 });
    expect(spent("b", usage, prices)).toEqual({});
    expect(names(tableOrder(items, "", { col: "cost", desc: true }, usage, prices))).toEqual(["c", "a", "b"]);
    expect(names(tableOrder(items, "", { col: "cost", desc: true }, usage, null))).toEqual(["a", "c", "b"]);
  });

  it("summarises an object once", () => {
    expect(summaryOf(items[0])).toBe(summaryOf(items[0]));
    expect(summaryOf(items[0]).state).toBe("Admitted");
    expect(summaryOf({ ...items[0] })).not.toBe(summaryOf(items[0]));
  });
});
