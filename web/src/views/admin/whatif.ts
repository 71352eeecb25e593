import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../../api/client";
import { milliGpu } from "../../ui/format";

// The What-if view's data: the SimulationReview it sends (a recorded period, and
// one scenario: nodes added, removed or replaced, GPU quotas changed, more policy
// as YAML) and what it draws from the answer (docs/simulator.md "What if").

export const GPU = "nvidia.com/gpu";

export interface Scenario {
  name: string;
  addNodes: string; // "2x8xH100-80GB"
  removeNodes: string[];
  cluster: string; // replaces the fleet when set
  // GPU nominal quota per ClusterQueue and flavor, in GPUs as typed ("12", "0.5"); only changed ones.
  quotas: Record<string, Record<string, string>>;
  policyYaml: string;
}

export interface WhatIfForm {
  since: string; // "7d" or an RFC 3339 time
  until?: string;
  checkpointInterval?: string;
  scenario: Scenario;
}

export class FormError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

// A copy of `cq` with the GPU nominal quota of each flavor in `quotas` replaced.
export function withGpuQuotas(cq: KubeObject, quotas: Record<string, string>): KubeObject {
  const copy = structuredClone(cq);
  for (const g of copy.spec?.resourceGroups ?? [])
    for (const f of g.flavors ?? [])
      for (const r of f.resources ?? []) if (r.name === GPU && quotas[f.name] !== undefined) r.nominalQuota = quotas[f.name].trim();
  return { apiVersion: copy.apiVersion, kind: copy.kind, metadata: { name: copy.metadata.name, labels: copy.metadata.labels }, spec: copy.spec };
}

// The objects of the YAML box; a document that does not parse is a FormError at "policy".
export function policyObjects(text: string): KubeObject[] {
  if (!text.trim()) return [];
  const out: KubeObject[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0) throw new FormError("policy", `document ${i + 1}: ${doc.errors[0].message}`);
    const obj = doc.toJS();
    if (obj == null) return;
    if (typeof obj !== "object" || Array.isArray(obj)) throw new FormError("policy", `document ${i + 1} is not an object (a manifest with apiVersion, kind and metadata)`);
    out.push(obj as KubeObject);
  });
  return out;
}

// The quota boxes that differ from the current quota, checked: a number of GPUs >= 0.
export function changedQuotas(clusterQueues: KubeObject[], quotas: Scenario["quotas"]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const cq of clusterQueues) {
    const edits = quotas[cq.metadata.name];
    if (!edits) continue;
    const changed: Record<string, string> = {};
    for (const [flavor, text] of Object.entries(edits)) {
      const current = currentGpuQuota(cq, flavor);
      if (!/^\d+(\.\d{1,3})?$/.test(text.trim()))
        throw new FormError(`quota/${cq.metadata.name}/${flavor}`, `${cq.metadata.name} ${flavor}: "${text}" is not a number of GPUs (like 8 or 0.5)`);
      if (current === undefined || Math.round(Number(text) * 1000) !== current) changed[flavor] = text;
    }
    if (Object.keys(changed).length > 0) out.push(withGpuQuotas(cq, changed));
  }
  return out;
}

export function currentGpuQuota(cq: KubeObject, flavor: string): number | undefined {
  for (const g of cq.spec?.resourceGroups ?? [])
    for (const f of g.flavors ?? [])
      if (f.name === flavor) for (const r of f.resources ?? []) if (r.name === GPU) return milliGpu(r.nominalQuota);
  return undefined;
}

export function buildReview(form: WhatIfForm, clusterQueues: KubeObject[]): KubeObject {
  const s = form.scenario;
  const scenario: Record<string, unknown> = { name: s.name.trim() || "changed" };
  if (s.addNodes.trim()) scenario.addNodes = s.addNodes.trim();
  if (s.cluster.trim()) scenario.cluster = s.cluster.trim();
  if (s.removeNodes.length > 0) scenario.removeNodes = s.removeNodes;
  const policy = [...changedQuotas(clusterQueues, s.quotas), ...policyObjects(s.policyYaml)];
  if (policy.length > 0) scenario.policy = policy;
  const spec: Record<string, unknown> = { since: form.since, scenarios: [scenario] };
  if (form.until) spec.until = form.until;
  if (form.checkpointInterval) spec.checkpointInterval = form.checkpointInterval;
  return { apiVersion: "tessera.dev/v1", kind: "SimulationReview", metadata: { name: "" }, spec };
}

// Where a 422's cause belongs in the form: "since", "addNodes", "removeNodes", "cluster", "policy" or "" (the page).
export function formFieldOf(cause: string): string {
  if (cause.startsWith("spec.since") || cause.startsWith("spec.until")) return "since";
  const m = /^spec\.scenarios\[0\]\.(\w+)/.exec(cause);
  if (m && ["addNodes", "removeNodes", "cluster", "policy", "name"].includes(m[1])) return m[1] === "name" ? "" : m[1];
  return "";
}

export interface Distribution {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface Series {
  t: number[];
  allocatedGpuMilli: number[];
  pending?: number[];
  running?: number[];
}

export interface RunResult {
  name: string;
  nodes: number;
  gpuMilli: number;
  clusterQueues: number;
  summary: {
    jobs: number;
    finished: number;
    unfinished: number;
    leftOut: number;
    allocationPercent: number;
    fragmentationPercent: number;
    makespanSeconds: number;
    jctSeconds: Distribution;
    queueingSeconds: Distribution;
    preemptions: number;
    lostGpuHours: number;
    fairness: number;
  };
  teams: { name: string; nominalGpus: number; jobs: number; finished: number; queueingSeconds: Distribution; jctSeconds: Distribution; gpuHoursReceived: number }[];
  warnings: string[];
  series: Series;
}

export interface WhatIfStatus {
  since: string;
  until: string;
  origin: string;
  jobs: number;
  neverRan: number;
  stillRunning: number;
  warnings: string[];
  observed: { jobs: number; queueingSeconds: Distribution; jctSeconds: Distribution; series: Series };
  results: RunResult[];
}

// Seconds as people read them: 45s, 12m, 3.4h, 2.1d.
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "—";
  if (seconds < 90) return `${Math.round(seconds)}s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)}m`;
  if (seconds < 36 * 3600) return `${(seconds / 3600).toFixed(1)}h`;
  return `${(seconds / 86400).toFixed(1)}d`;
}

// "−1.5h" / "+12m" / "same" against the current run.
export function delta(value: number, base: number, format: (x: number) => string): string {
  if (!Number.isFinite(value) || !Number.isFinite(base)) return "—";
  if (Math.abs(value - base) < 1e-9) return "same";
  return `${value > base ? "+" : "−"}${format(Math.abs(value - base))}`;
}

export interface CompareRow {
  name: string;
  gpus: number;
  jobs: number;
  finished: number | string;
  meanWait: number;
  p90Wait: number;
  meanJct: number;
  allocation?: number;
  preemptions?: number;
}

// A statistic of no job (none finished) is no number, shown as "—", never 0.
const orNaN = (d: Distribution, k: "mean" | "p90") => (d.count > 0 ? d[k] : NaN);

// One row per run, the observed one last.
export function compareRows(st: WhatIfStatus): CompareRow[] {
  const rows: CompareRow[] = st.results.map((r) => ({
    name: r.name,
    gpus: r.gpuMilli / 1000,
    jobs: r.summary.jobs,
    finished: r.summary.finished,
    meanWait: orNaN(r.summary.queueingSeconds, "mean"),
    p90Wait: orNaN(r.summary.queueingSeconds, "p90"),
    meanJct: orNaN(r.summary.jctSeconds, "mean"),
    allocation: r.summary.allocationPercent,
    preemptions: r.summary.preemptions,
  }));
  rows.push({
    name: "observed",
    gpus: st.results[0] ? st.results[0].gpuMilli / 1000 : 0,
    jobs: st.observed.jobs,
    finished: st.observed.jctSeconds.count,
    meanWait: orNaN(st.observed.queueingSeconds, "mean"),
    p90Wait: orNaN(st.observed.queueingSeconds, "p90"),
    meanJct: orNaN(st.observed.jctSeconds, "mean"),
  });
  return rows;
}

// Series with their own time points on one axis (Unix seconds), each value held
// until its next point (a step function), as uPlot draws aligned data.
export function alignSeries(originMs: number, series: { t: number[]; values: number[] }[]): { t: number[]; values: (number | null)[][] } {
  const times = [...new Set(series.flatMap((s) => s.t))].sort((a, b) => a - b);
  const values = series.map((s) => {
    const out: (number | null)[] = [];
    let i = 0;
    let current: number | null = null;
    for (const t of times) {
      while (i < s.t.length && s.t[i] <= t) current = s.values[i++];
      out.push(current);
    }
    return out;
  });
  return { t: times.map((t) => originMs / 1000 + t), values };
}

// Per team, each run's mean wait: [team, current, scenario...].
export function teamWaits(st: WhatIfStatus): { team: string; waits: (number | undefined)[] }[] {
  const teams = [...new Set(st.results.flatMap((r) => r.teams.map((t) => t.name)))].sort();
  return teams.map((team) => ({
    team,
    waits: st.results.map((r) => {
      const d = r.teams.find((t) => t.name === team)?.queueingSeconds;
      return d && d.count > 0 ? d.mean : undefined;
    }),
  }));
}
