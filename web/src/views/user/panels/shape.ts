// The panels' data shaping, pure so that it is tested without a browser: the
// server's objects (status fields as the controllers write them, docs/workloads.md)
// turned into the rows and series the panels draw.
import type { KubeObject } from "../../../api/client";

type Condition = { type?: string; status?: string; reason?: string; message?: string };

export function condition(obj: KubeObject | undefined, type: string): Condition | undefined {
  return ((obj?.status?.conditions ?? []) as Condition[]).find((c) => c.type === type);
}

// "45s", "3m 20s", "2h 5m": how long from start to end (or to now while it runs).
export function duration(start: string | undefined, end?: string, now = Date.now()): string {
  if (!start) return "";
  const from = Date.parse(start);
  const to = end ? Date.parse(end) : now;
  if (Number.isNaN(from) || Number.isNaN(to)) return "";
  const s = Math.max(0, Math.round((to - from) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

// ---------------------------------------------------------------- pods

export interface PodState {
  phase: string;
  ready: boolean;
  why: string; // why not ready, in the kubelet's words where it has them
}

export function podState(pod: KubeObject): PodState {
  const phase: string = pod.status?.phase ?? "Pending";
  if (pod.metadata.deletionTimestamp) return { phase: "Terminating", ready: false, why: "the pod is being deleted" };
  const ready = condition(pod, "Ready");
  if (ready?.status === "True") return { phase, ready: true, why: "" };
  for (const c of (pod.status?.containerStatuses ?? []) as { state?: Record<string, { reason?: string; message?: string }> }[]) {
    const waiting = c.state?.waiting ?? c.state?.terminated;
    if (waiting?.reason) return { phase, ready: false, why: waiting.message ? `${waiting.reason}: ${waiting.message}` : waiting.reason };
  }
  const why = ready?.message || ready?.reason || (pod.status?.message as string | undefined) || `the pod is ${phase}`;
  return { phase, ready: false, why };
}

const byRankThenName = (a: KubeObject, b: KubeObject) =>
  Number(a.metadata.annotations?.["tessera.dev/rank"] ?? 0) - Number(b.metadata.annotations?.["tessera.dev/rank"] ?? 0) ||
  a.metadata.name.localeCompare(b.metadata.name);

// ---------------------------------------------------------------- InferenceService

export interface ReplicaRow {
  workload: string;
  revision: string;
  pod?: string;
  node?: string;
  ready: boolean;
  state: string; // Ready, Queued, Pending, Running, ...
  why: string;
}

// One row per replica Workload (labelled tessera.dev/inferenceservice), with its
// live pod (labelled tessera.dev/workload): ready, or why not, as
// `tessera describe isvc` says it.
export function replicaRows(workloads: KubeObject[], pods: KubeObject[]): ReplicaRow[] {
  const podOf = new Map<string, KubeObject>();
  for (const p of pods) {
    const wl = p.metadata.labels?.["tessera.dev/workload"];
    if (wl && !(podOf.has(wl) && p.metadata.deletionTimestamp)) podOf.set(wl, p);
  }
  return workloads
    .filter((w) => !w.metadata.annotations?.["tessera.dev/placeholder"])
    .map((w) => {
      const revision = w.metadata.labels?.["tessera.dev/revision"] ?? "";
      const pod = podOf.get(w.metadata.name);
      const admitted = Boolean(w.status?.admission);
      const finished = condition(w, "Finished");
      if (finished?.status === "True") {
        return { workload: w.metadata.name, revision, pod: pod?.metadata.name, node: pod?.spec?.nodeName, ready: false, state: "Finished", why: finished.message || "ended; it is replaced" };
      }
      if (!admitted) {
        const why = condition(w, "QuotaReserved")?.message || "queued; not yet considered by the scheduler";
        return { workload: w.metadata.name, revision, ready: false, state: "Queued", why };
      }
      if (!pod) return { workload: w.metadata.name, revision, ready: false, state: "Admitted", why: "admitted; its pod is being made" };
      const s = podState(pod);
      return {
        workload: w.metadata.name,
        revision,
        pod: pod.metadata.name,
        node: pod.spec?.nodeName,
        ready: s.ready,
        state: s.ready ? "Ready" : s.phase,
        why: s.why,
      };
    })
    .sort((a, b) => a.revision.localeCompare(b.revision) || a.workload.localeCompare(b.workload));
}

// ---------------------------------------------------------------- Sweep

export interface TrialRow {
  name: string;
  number: number; // n of SWEEP-n
  state: string;
  params: Record<string, string>;
  objective: number | null;
  reason?: string;
  message?: string;
  createdAt?: string;
}

interface TrialEntry {
  name: string;
  state?: string;
  parameterAssignments?: { name: string; value: string }[];
  objectiveValue?: number | null;
  reason?: string;
  message?: string;
  createdAt?: string;
}

export function trialNumber(sweep: string, trial: string): number {
  const n = Number(trial.slice(sweep.length + 1));
  return trial.startsWith(`${sweep}-`) && Number.isInteger(n) ? n : NaN;
}

export function trialRows(sweep: KubeObject): TrialRow[] {
  const list = (sweep.status?.trialList ?? []) as TrialEntry[];
  return list
    .map((t, i) => {
      const n = trialNumber(sweep.metadata.name, t.name);
      return {
        name: t.name,
        number: Number.isNaN(n) ? i + 1 : n,
        state: t.state ?? "Pending",
        params: Object.fromEntries((t.parameterAssignments ?? []).map((p) => [p.name, p.value])),
        objective: typeof t.objectiveValue === "number" ? t.objectiveValue : null,
        reason: t.reason,
        message: t.message,
        createdAt: t.createdAt,
      };
    })
    .sort((a, b) => a.number - b.number);
}

// The parameters' names, in the spec's order (then any only a trial names).
export function parameterNames(sweep: KubeObject, rows: TrialRow[]): string[] {
  const names = ((sweep.spec?.parameters ?? []) as { name: string }[]).map((p) => p.name);
  for (const r of rows) for (const k of Object.keys(r.params)) if (!names.includes(k)) names.push(k);
  return names;
}

export type Goal = "minimize" | "maximize";

export function goalOf(sweep: KubeObject): Goal {
  return sweep.spec?.objective?.type === "maximize" ? "maximize" : "minimize";
}

// The best value so far after each trial (null before the first value).
export function bestSoFar(values: (number | null)[], goal: Goal): (number | null)[] {
  let best: number | null = null;
  return values.map((v) => {
    if (v !== null && (best === null || (goal === "minimize" ? v < best : v > best))) best = v;
    return best;
  });
}

// A trial's value counts for the best once it ended (Succeeded, or stopped
// early), as the server's currentOptimalTrial; a running trial's is its latest.
export const COMPLETED = new Set(["Succeeded", "EarlyStopped"]);

// The objective chart's data: trial numbers, completed trials' values, running
// (or otherwise unfinished) trials' values, and the best completed so far.
export function objectiveSeries(
  rows: TrialRow[],
  goal: Goal,
): [number[], (number | null)[], (number | null)[], (number | null)[]] {
  const done = rows.map((r) => (COMPLETED.has(r.state) ? r.objective : null));
  return [
    rows.map((r) => r.number),
    done,
    rows.map((r) => (COMPLETED.has(r.state) ? null : r.objective)),
    bestSoFar(done, goal),
  ];
}

// ---------------------------------------------------------------- Pipeline

export interface StepNode {
  id: string; // the node's name: STEP, or STEP-I for item I of a fan-out
  step: string;
  item?: unknown;
  deps: string[];
  phase: string;
  attempts: number;
  job?: string;
  startedAt?: string;
  finishedAt?: string;
  message?: string;
  result?: string;
  when?: string;
}

interface StepSpec {
  name: string;
  dependsOn?: string[];
  withItems?: unknown[];
  when?: string;
}

interface NodeStatus {
  phase?: string;
  attempts?: number;
  job?: string;
  startedAt?: string;
  finishedAt?: string;
  message?: string;
  result?: string;
}

// The DAG's nodes as the pipeline controller expands them: a step with
// withItems is one node per item (STEP-0, STEP-1, ...), and depending on it is
// depending on all of them. A node the status does not name yet is Pending.
export function pipelineNodes(spec: { steps?: StepSpec[] } | undefined, nodes: Record<string, NodeStatus> = {}): StepNode[] {
  const steps = spec?.steps ?? [];
  const nodesOf = new Map<string, string[]>();
  for (const s of steps) {
    nodesOf.set(s.name, s.withItems ? s.withItems.map((_, i) => `${s.name}-${i}`) : [s.name]);
  }
  const out: StepNode[] = [];
  for (const s of steps) {
    const deps = (s.dependsOn ?? []).flatMap((d) => nodesOf.get(d) ?? []);
    (nodesOf.get(s.name) ?? []).forEach((id, i) => {
      const st = nodes[id] ?? {};
      out.push({
        id,
        step: s.name,
        item: s.withItems ? s.withItems[i] : undefined,
        deps,
        phase: st.phase ?? "Pending",
        attempts: st.attempts ?? 0,
        job: st.job,
        startedAt: st.startedAt,
        finishedAt: st.finishedAt,
        message: st.message,
        result: st.result,
        when: s.when,
      });
    });
  }
  return out;
}

// The spec a run runs: the one recorded at its first pass, else its inline one.
export function runSpec(run: KubeObject): { steps?: StepSpec[] } | undefined {
  return run.status?.pipelineSpec ?? run.spec?.pipelineSpec;
}

export function itemText(item: unknown): string {
  return typeof item === "string" ? item : JSON.stringify(item);
}

// ---------------------------------------------------------------- TrainingJob

export interface WorkerRow {
  rank: number;
  pod: string;
  node?: string;
  gpuMilli: number;
  phase: string;
  ready: boolean;
  why: string;
}

// The gang's workers: its Workload's pods, by rank (the scheduler's
// tessera.dev/rank annotation), with their GPUs as placed.
export function workerRows(pods: KubeObject[]): WorkerRow[] {
  return [...pods].sort(byRankThenName).map((p) => {
    const s = podState(p);
    return {
      rank: Number(p.metadata.annotations?.["tessera.dev/rank"] ?? 0),
      pod: p.metadata.name,
      node: p.spec?.nodeName,
      gpuMilli: Number(p.metadata.annotations?.["tessera.dev/gpu-milli"] ?? 0),
      phase: s.phase,
      ready: s.ready,
      why: s.why,
    };
  });
}

export interface ElasticSize {
  min: number;
  max: number;
  current?: number;
  elastic: boolean;
}

export function elasticSize(tj: KubeObject): ElasticSize {
  const spec = tj.spec ?? {};
  const fixed = typeof spec.replicas === "number";
  const max = fixed ? spec.replicas : (spec.maxReplicas ?? spec.minReplicas ?? 1);
  const min = fixed ? spec.replicas : (spec.minReplicas ?? max);
  return { min, max, current: tj.status?.worldSize, elastic: !fixed && min !== max };
}

// ---------------------------------------------------------------- Notebook

// status.gpuUtilization.history as a time series: seconds since the epoch, percent.
export function gpuSeries(nb: KubeObject): [number[], number[]] {
  const history = (nb.status?.gpuUtilization?.history ?? []) as { time: string; percent: number }[];
  const points = history
    .map((h) => [Date.parse(h.time) / 1000, h.percent] as const)
    .filter(([t, v]) => !Number.isNaN(t) && typeof v === "number")
    .sort((a, b) => a[0] - b[0]);
  return [points.map((p) => p[0]), points.map((p) => p[1])];
}
