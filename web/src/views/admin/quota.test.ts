import { describe, expect, it } from "vitest";
import { lentNow, quotaOf } from "./quota";

const cq = (name: string, cohort: string | undefined, nominal: number, used: number, borrowed: number, lendingLimit?: number) => ({
  metadata: { name },
  spec: {
    cohort,
    resourceGroups: [{ coveredResources: ["nvidia.com/gpu"], flavors: [{ name: "h100", resources: [{ name: "nvidia.com/gpu", nominalQuota: nominal, lendingLimit }] }] }],
  },
  status: { flavorsUsage: [{ name: "h100", resources: [{ name: "nvidia.com/gpu", total: String(used), borrowed: String(borrowed) }] }] },
});

describe("a queue's quota and what it lends", () => {
  it("reads nominal, limits, use and borrowing per flavor", () => {
    const [q] = quotaOf(cq("a", "c", 4, 6, 2, 2));
    expect(q).toMatchObject({ flavor: "h100", nominal: 4000, lendingLimit: 2000, reserved: 2000, used: 6000, borrowed: 2000 });
  });

  it("shares what the cohort borrows among the queues with unused lendable quota", () => {
    // a borrows 3 beyond its 4; b has 4 unused, c has 2 unused (lending limit 2): b lends 2, c lends 1.
    const lent = lentNow([cq("a", "c1", 4, 7, 3), cq("b", "c1", 4, 0, 0), cq("c", "c1", 4, 1, 0, 2), cq("solo", undefined, 8, 8, 0)]);
    expect(lent.get("a")!.get("h100")).toBe(0);
    expect(lent.get("b")!.get("h100")).toBe(2000);
    expect(lent.get("c")!.get("h100")).toBe(1000);
    expect(lent.get("solo")!.size).toBe(0);
  });

  it("lends nothing when nobody borrows", () => {
    const lent = lentNow([cq("a", "c1", 4, 1, 0), cq("b", "c1", 4, 0, 0)]);
    expect(lent.get("b")!.get("h100")).toBe(0);
  });
});
