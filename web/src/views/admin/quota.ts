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
