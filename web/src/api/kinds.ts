import type { Resource } from "./client";

// The kinds the portal reads and writes, as the server serves them (docs/api.md).
const r = (group: string, version: string, plural: string, kind: string, namespaced = true): Resource => ({
  group,
  version,
  plural,
  kind,
  namespaced,
});

export const K = {
  namespaces: r("", "v1", "namespaces", "Namespace", false),
  nodes: r("", "v1", "nodes", "Node", false),
  pods: r("", "v1", "pods", "Pod"),
  events: r("", "v1", "events", "Event"),
  services: r("", "v1", "services", "Service"),
  resourceQuotas: r("", "v1", "resourcequotas", "ResourceQuota"),
  jobs: r("batch", "v1", "jobs", "Job"),
  workloads: r("kueue.x-k8s.io", "v1beta1", "workloads", "Workload"),
  localQueues: r("kueue.x-k8s.io", "v1beta1", "localqueues", "LocalQueue"),
  clusterQueues: r("kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue", false),
  resourceFlavors: r("kueue.x-k8s.io", "v1beta1", "resourceflavors", "ResourceFlavor", false),
  priorityClasses: r("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false),
  roleBindings: r("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
  notebooks: r("tessera.dev", "v1", "notebooks", "Notebook"),
  inferenceServices: r("tessera.dev", "v1", "inferenceservices", "InferenceService"),
  trainingJobs: r("tessera.dev", "v1", "trainingjobs", "TrainingJob"),
  sweeps: r("tessera.dev", "v1", "sweeps", "Sweep"),
  pipelines: r("tessera.dev", "v1", "pipelines", "Pipeline"),
  pipelineRuns: r("tessera.dev", "v1", "pipelineruns", "PipelineRun"),
  templates: r("tessera.dev", "v1", "templates", "Template", false),
  approvalPolicies: r("tessera.dev", "v1", "approvalpolicies", "ApprovalPolicy", false),
  approvalRequests: r("tessera.dev", "v1", "approvalrequests", "ApprovalRequest"),
  budgets: r("tessera.dev", "v1", "budgets", "Budget"),
  usageRecords: r("tessera.dev", "v1", "usagerecords", "UsageRecord"),
  simulationReviews: r("tessera.dev", "v1", "simulationreviews", "SimulationReview", false),
  volcanoJobs: r("batch.volcano.sh", "v1alpha1", "jobs", "Job"),
} as const;

export type KindKey = keyof typeof K;

// The resource of an object's apiVersion and kind, for links and actions.
export function resourceOf(apiVersion: string | undefined, kind: string | undefined): Resource | undefined {
  const [group, version] = (apiVersion ?? "").includes("/") ? (apiVersion ?? "").split("/") : ["", apiVersion ?? ""];
  return Object.values(K).find((k) => k.kind === kind && k.group === group && k.version === version);
}
