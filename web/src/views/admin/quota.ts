import type { KubeObject } from "../../api/client";
import { milliGpu } from "../../ui/format";

// A ClusterQueue's quota and usage per flavor for one resource, read as `tessera
// queues` reads it: spec.resourceGroups for the limits, status.flavorsUsage for
// what its admitted work holds and borrows. Reserved is what is never lent
// (nominal - lendingLimit; all of it with lendingLimit 0).

export interface FlavorQuota {
  flavor: string;
  nominal: number; // milli
  borrowingLimit?: number;
  lendingLimit?: number;
  reserved: number;
  used: number;
  borrowed: number;
}

export function quotaOf(cq: KubeObject, resource = "nvidia.com/gpu"): FlavorQuota[] {
  const usage = new Map<string, { total?: string; borrowed?: string }>();
  for (const f of cq.status?.flavorsUsage ?? [])
    for (const r of f.resources ?? []) if (r.name === resource) usage.set(f.name, r);
  const out: FlavorQuota[] = [];
  for (const g of cq.spec?.resourceGroups ?? [])
    for (const f of g.flavors ?? [])
      for (const r of f.resources ?? []) {
        if (r.name !== resource) continue;
        const nominal = milliGpu(r.nominalQuota);
        const lendingLimit = r.lendingLimit === undefined ? undefined : milliGpu(r.lendingLimit);
        const u = usage.get(f.name);
        out.push({
          flavor: f.name,
          nominal,
          borrowingLimit: r.borrowingLimit === undefined ? undefined : milliGpu(r.borrowingLimit),
          lendingLimit,
          reserved: lendingLimit === undefined ? 0 : Math.max(0, nominal - lendingLimit),
          used: milliGpu(u?.total),
          borrowed: milliGpu(u?.borrowed),
        });
      }
  return out;
}

// Lendable (min(lendingLimit, nominal)) minus the part this queue itself uses above its guarantee.
export const idleLendable = (q: FlavorQuota) => {
  const lendable = Math.min(q.lendingLimit ?? q.nominal, q.nominal);
  const guaranteed = q.nominal - lendable;
  return Math.max(0, lendable - Math.max(0, q.used - q.borrowed - guaranteed));
};

// What each ClusterQueue of a cohort lends now, per flavor (milli): what the
// cohort's queues borrow, shared among the queues with unused lendable quota in
// proportion to it. A queue borrows only once its own nominal quota is in use,
// so a borrower lends nothing; which lender's quota a borrower holds is not
// recorded, hence the proportion. Queues without a cohort lend nothing.
export function lentNow(queues: KubeObject[], resource = "nvidia.com/gpu"): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  const byCohort = new Map<string, KubeObject[]>();
  for (const q of queues) {
    out.set(q.metadata.name, new Map());
    const cohort = q.spec?.cohort as string | undefined;
    if (cohort) byCohort.set(cohort, [...(byCohort.get(cohort) ?? []), q]);
  }
  for (const members of byCohort.values()) {
    const quotas = members.map((q) => ({ name: q.metadata.name, rows: quotaOf(q, resource) }));
    const flavors = new Set(quotas.flatMap((q) => q.rows.map((r) => r.flavor)));
    for (const flavor of flavors) {
      let borrowed = 0;
      let unused = 0;
      for (const q of quotas)
        for (const r of q.rows)
          if (r.flavor === flavor) {
            borrowed += r.borrowed;
            unused += idleLendable(r);
          }
      for (const q of quotas)
        for (const r of q.rows)
          if (r.flavor === flavor) {
            const mine = idleLendable(r);
            out.get(q.name)!.set(flavor, unused > 0 ? Math.min(mine, Math.round((borrowed * mine) / unused)) : 0);
          }
    }
  }
  return out;
}
