import type { ApiError, Client, KubeObject } from "../../api/client";
import { K } from "../../api/kinds";
import { milliGpu } from "../../ui/format";

// What a kueue Workload says about itself, as the tables and pages show it.

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export const conditions = (o: KubeObject | undefined): Condition[] => o?.status?.conditions ?? [];
export const condition = (o: KubeObject | undefined, type: string) => conditions(o).find((c) => c.type === type);

export interface Summary {
  name: string;
  state: string; // Admitted, Pending, Finished, Evicted, Waiting for approval, Inactive
  reason: string; // the short reason (QuotaExceeded ...)
  message: string; // the core's words
  queue: string;
  position?: number;
  milliGpu: number;
  where: string; // node[devices], ...
  flavor: string;
  owner: { plural: string; name: string; kind: string };
  created: string;
}

const OWNER_LABELS: [string, string, string][] = [
  ["tessera.dev/sweep", "sweeps", "Sweep"],
  ["tessera.dev/pipelinerun", "pipelineruns", "PipelineRun"],
  ["tessera.dev/inferenceservice", "inferenceservices", "InferenceService"],
  ["tessera.dev/trainingjob", "trainingjobs", "TrainingJob"],
  ["tessera.dev/notebook", "notebooks", "Notebook"],
];
const OWNER_KINDS: Record<string, string> = {
  Notebook: "notebooks",
  Job: "jobs",
  TrainingJob: "trainingjobs",
  InferenceService: "inferenceservices",
  Sweep: "sweeps",
  PipelineRun: "pipelineruns",
};

export function ownerOf(w: KubeObject): Summary["owner"] {
  const labels = w.metadata.labels ?? {};
  for (const [label, plural, kind] of OWNER_LABELS) if (labels[label]) return { plural, name: labels[label], kind };
  const ref = w.metadata.ownerReferences?.find((r) => r.controller) ?? w.metadata.ownerReferences?.[0];
  if (ref && OWNER_KINDS[ref.kind]) return { plural: OWNER_KINDS[ref.kind], name: ref.name, kind: ref.kind };
  return { plural: "workloads", name: w.metadata.name, kind: "Workload" };
}

export function requestedMilliGpu(w: KubeObject): number {
  let total = 0;
  for (const ps of w.spec?.podSets ?? []) {
    let per = 0;
    for (const c of ps.template?.spec?.containers ?? []) {
      per += milliGpu(c.resources?.limits?.["nvidia.com/gpu"] ?? c.resources?.requests?.["nvidia.com/gpu"]);
    }
    total += per * (ps.count ?? 1);
  }
  return total;
}

// "vm[0,1]" per node the admission placed pods on.
export function placement(w: KubeObject): { where: string; flavor: string; milli: number } {
  const nodes = new Map<string, number[]>();
  let flavor = "";
  let milli = 0;
  for (const psa of w.status?.admission?.podSetAssignments ?? []) {
    flavor ||= psa.flavors?.["nvidia.com/gpu"] ?? "";
    for (const p of psa.placements ?? []) {
      const list = nodes.get(p.node) ?? [];
      for (const d of p.devices ?? []) {
        list.push(d.index);
        milli += d.milli ?? 0;
      }
      nodes.set(p.node, list);
    }
  }
  const where = [...nodes].map(([n, ds]) => (ds.length ? `${n}[${[...new Set(ds)].sort((a, b) => a - b).join(",")}]` : n));
  return { where: where.join(" "), flavor, milli };
}

export function positionIn(message: string | undefined): number | undefined {
  const m = /position (\d+) in ClusterQueue/.exec(message ?? "");
  return m ? Number(m[1]) : undefined;
}

export function summarize(w: KubeObject): Summary {
  const finished = condition(w, "Finished");
  const evicted = condition(w, "Evicted");
  const admitted = condition(w, "Admitted");
  const reserved = condition(w, "QuotaReserved");
  const approval = w.metadata.annotations?.["tessera.dev/approval"];
  let state = "Pending";
  let reason = reserved?.reason ?? "";
  let message = reserved?.message ?? admitted?.message ?? "";
  if (finished?.status === "True") [state, reason, message] = ["Finished", finished.reason ?? "", finished.message ?? ""];
  else if (admitted?.status === "True") [state, reason, message] = ["Admitted", admitted.reason ?? "", admitted.message ?? ""];
  else if (evicted?.status === "True") [state, reason, message] = ["Evicted", evicted.reason ?? "", evicted.message ?? ""];
  else if (w.spec?.active === false) state = "Inactive";
  else if (approval && approval !== "approved") state = "Waiting for approval";
  const p = placement(w);
  return {
    name: w.metadata.name,
    state,
    reason,
    message,
    queue: w.spec?.queueName ?? "",
    position: state === "Pending" ? positionIn(message) : undefined,
    milliGpu: p.milli || requestedMilliGpu(w),
    where: p.where,
    flavor: p.flavor,
    owner: ownerOf(w),
    created: w.metadata.creationTimestamp ?? "",
  };
}

// The Workload name each kind's controller gives its work (docs/workloads.md).
export function workloadNameFor(plural: string, name: string, object?: KubeObject): string | undefined {
  if (object?.status?.workload && typeof object.status.workload === "string") return object.status.workload;
  switch (plural) {
    case "workloads":
      return name;
    case "jobs":
      return `job-${name}`;
    case "trainingjobs":
      return `trainingjob-${name}`;
    case "notebooks":
      return `notebook-${name}`;
  }
  return undefined;
}

// The label a kind's Workloads carry when it has many (trials, steps, replicas).
export const OWNER_LABEL: Record<string, string> = {
  sweeps: "tessera.dev/sweep",
  pipelineruns: "tessera.dev/pipelinerun",
  inferenceservices: "tessera.dev/inferenceservice",
};

// Prices per GPU-hour by flavor (annotation tessera.dev/price-per-gpu-hour), when
// the user may read ResourceFlavors; null when RBAC does not let them.
export async function flavorPrices(client: Client, signal?: AbortSignal): Promise<Map<string, number> | null> {
  try {
    const list = await client.list(K.resourceFlavors, undefined, undefined, signal);
    const out = new Map<string, number>();
    for (const f of list.items) {
      const p = Number(f.metadata.annotations?.["tessera.dev/price-per-gpu-hour"]);
      if (Number.isFinite(p) && p > 0) out.set(f.metadata.name, p);
    }
    return out;
  } catch (e) {
    if ((e as ApiError).code === 403) return null;
    throw e;
  }
}

// The flavors a namespace's queue can land on, in the ClusterQueue's order:
// from the LocalQueue to its ClusterQueue (which a data scientist may not read: then []).
export async function queueFlavors(client: Client, ns: string, queue: string, signal?: AbortSignal): Promise<string[]> {
  const lq = await client.get(K.localQueues, ns, queue, signal);
  const cqName = lq.spec?.clusterQueue;
  if (!cqName) return [];
  try {
    const cq = await client.get(K.clusterQueues, undefined, cqName, signal);
    const out: string[] = [];
    for (const g of cq.spec?.resourceGroups ?? []) {
      if (!(g.coveredResources ?? []).includes("nvidia.com/gpu")) continue;
      for (const f of g.flavors ?? []) out.push(f.name);
    }
    return out;
  } catch (e) {
    if ((e as ApiError).code === 403) return [];
    throw e;
  }
}

// GPU-seconds held so far by a namespace's workloads, from its UsageRecords.
export async function usageByWorkload(client: Client, ns: string, signal?: AbortSignal) {
  const list = await client.list(K.usageRecords, ns, undefined, signal);
  const now = Date.now();
  const out = new Map<string, { gpuSeconds: number; flavor: string }[]>();
  for (const r of list.items) {
    const s = r.spec ?? {};
    const start = Date.parse(s.start ?? "");
    if (!Number.isFinite(start)) continue;
    const end = s.end ? Date.parse(s.end) : now;
    const gpuSeconds = ((s.gpuMilli ?? 0) / 1000) * Math.max(0, (end - start) / 1000);
    const list2 = out.get(s.workload) ?? [];
    list2.push({ gpuSeconds, flavor: s.flavor ?? "" });
    out.set(s.workload, list2);
  }
  return out;
}

// The field a Status's cause or message points at: "spec.gpu: ..." -> "spec.gpu",
// "parameters.cpu: ..." -> "parameters.cpu", "...makes an invalid Notebook: spec.x: ..." -> "spec.x".
export function fieldErrors(e: unknown): { field: string; message: string }[] {
  const err = e as ApiError;
  if (err?.causes?.length) return err.causes.map((c) => ({ field: c.field ?? "", message: c.message ?? err.message }));
  const msg = err?.message ?? String(e);
  const inner = /makes an invalid \w+: (.*)$/s.exec(msg)?.[1] ?? msg;
  const m = /^([a-zA-Z][\w.\-[\]/\\]*?): (.*)$/s.exec(inner);
  return m ? [{ field: m[1], message: m[2] }] : [{ field: "", message: msg }];
}
