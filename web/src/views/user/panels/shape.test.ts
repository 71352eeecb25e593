import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/client";
import {
  bestSoFar,
  duration,
  elasticSize,
  gpuSeries,
  objectiveSeries,
  parameterNames,
  pipelineNodes,
  podState,
  replicaRows,
  trialRows,
  workerRows,
} from "./shape";
import { layoutDag } from "./dagLayout";

const obj = (name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  ...extra,
  metadata: { name, ...(extra.metadata ?? {}) },
});

describe("duration", () => {
  it("reads seconds, minutes, hours", () => {
    expect(duration("2026-01-01T00:00:00Z", "2026-01-01T00:00:42Z")).toBe("42s");
    expect(duration("2026-01-01T00:00:00Z", "2026-01-01T00:03:20Z")).toBe("3m 20s");
    expect(duration("2026-01-01T00:00:00Z", "2026-01-01T02:05:00Z")).toBe("2h 5m");
  });
  it("runs to now while unfinished, and is empty without a start", () => {
    expect(duration("2026-01-01T00:00:00Z", undefined, Date.parse("2026-01-01T00:00:10Z"))).toBe("10s");
    expect(duration(undefined)).toBe("");
  });
});

describe("podState", () => {
  it("is ready when its Ready condition is True", () => {
    const p = obj("p", { status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } });
    expect(podState(p)).toEqual({ phase: "Running", ready: true, why: "" });
  });
  it("says why not in the kubelet's words", () => {
    const p = obj("p", {
      status: {
        phase: "Pending",
        containerStatuses: [{ state: { waiting: { reason: "ImagePullBackOff", message: "no such image" } } }],
      },
    });
    expect(podState(p).why).toBe("ImagePullBackOff: no such image");
    expect(podState(obj("q", { status: { phase: "Pending" } })).why).toBe("the pod is Pending");
  });
});

describe("replicaRows", () => {
  const wl = (name: string, rev: string, status: object) =>
    obj(name, { metadata: { name, labels: { "tessera.dev/revision": rev } }, status });
  it("pairs each replica's Workload with its pod and says why one waits", () => {
    const rows = replicaRows(
      [
        wl("s-r1-aaaaa", "r1", { admission: {} }),
        wl("s-r1-bbbbb", "r1", { conditions: [{ type: "QuotaReserved", status: "False", message: "couldn't assign flavors" }] }),
        wl("s-r0-ccccc", "r0", { admission: {} }),
      ],
      [
        obj("s-r1-aaaaa-replica-0", {
          metadata: { name: "s-r1-aaaaa-replica-0", labels: { "tessera.dev/workload": "s-r1-aaaaa" } },
          spec: { nodeName: "node-1" },
          status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
        }),
      ],
    );
    expect(rows.map((r) => [r.workload, r.state, r.pod ?? "", r.node ?? ""])).toEqual([
      ["s-r0-ccccc", "Admitted", "", ""],
      ["s-r1-aaaaa", "Ready", "s-r1-aaaaa-replica-0", "node-1"],
      ["s-r1-bbbbb", "Queued", "", ""],
    ]);
    expect(rows[2].why).toBe("couldn't assign flavors");
  });
});

describe("sweeps", () => {
  const sweep = obj("lr", {
    spec: { objective: { type: "minimize" }, parameters: [{ name: "lr" }, { name: "layers" }] },
    status: {
      trialList: [
        { name: "lr-2", state: "Running", parameterAssignments: [{ name: "lr", value: "0.1" }], objectiveValue: 3 },
        { name: "lr-10", state: "Succeeded", parameterAssignments: [{ name: "lr", value: "0.2" }], objectiveValue: null },
        { name: "lr-1", state: "Succeeded", parameterAssignments: [{ name: "lr", value: "0.01" }, { name: "layers", value: "4" }], objectiveValue: 5 },
      ],
    },
  });
  it("orders the trials by number and reads their parameters", () => {
    const rows = trialRows(sweep);
    expect(rows.map((r) => r.number)).toEqual([1, 2, 10]);
    expect(rows[0].params).toEqual({ lr: "0.01", layers: "4" });
    expect(rows[2].objective).toBeNull();
    expect(parameterNames(sweep, rows)).toEqual(["lr", "layers"]);
  });
  it("keeps the best so far for either goal", () => {
    expect(bestSoFar([null, 5, 7, 3, null, 4], "minimize")).toEqual([null, 5, 5, 3, 3, 3]);
    expect(bestSoFar([2, 1, 9], "maximize")).toEqual([2, 2, 9]);
    // Only ended trials count for the best; lr-2 still runs.
    expect(objectiveSeries(trialRows(sweep), "minimize")).toEqual([
      [1, 2, 10],
      [5, null, null],
      [null, 3, null],
      [5, 5, 5],
    ]);
  });
});

describe("pipelineNodes", () => {
  const spec = {
    steps: [
      { name: "prepare" },
      { name: "train", dependsOn: ["prepare"], withItems: ["0.01", { lr: 0.1 }] },
      { name: "evaluate", dependsOn: ["train"], when: "{{steps.train.status}} == Succeeded" },
    ],
  };
  it("fans a step out per item and depends on every node of a fanned-out step", () => {
    const nodes = pipelineNodes(spec, { prepare: { phase: "Succeeded", attempts: 1, job: "run-prepare-1" }, "train-0": { phase: "Running" } });
    expect(nodes.map((n) => [n.id, n.phase, n.deps])).toEqual([
      ["prepare", "Succeeded", []],
      ["train-0", "Running", ["prepare"]],
      ["train-1", "Pending", ["prepare"]],
      ["evaluate", "Pending", ["train-0", "train-1"]],
    ]);
    expect(nodes[2].item).toEqual({ lr: 0.1 });
    expect(nodes[0].job).toBe("run-prepare-1");
  });
  it("lays the DAG out top to bottom, one box per node, an edge per dependency", () => {
    const g = layoutDag(pipelineNodes(spec));
    expect(g.nodes).toHaveLength(4);
    expect(g.edges).toHaveLength(4);
    const y = Object.fromEntries(g.nodes.map((n) => [n.id, n.y]));
    expect(y.prepare).toBeLessThan(y["train-0"]);
    expect(y["train-0"]).toBe(y["train-1"]);
    const x = Object.fromEntries(g.nodes.map((n) => [n.id, n.x]));
    expect(x["train-0"]).toBeLessThan(x["train-1"]); // a fan-out reads left to right
    expect(g.nodes.map((n) => n.id)).toEqual(["prepare", "train-0", "train-1", "evaluate"]);
    expect(y["train-1"]).toBeLessThan(y.evaluate);
    expect(g.width).toBeGreaterThan(0);
    for (const e of g.edges) expect(e.points.length).toBeGreaterThanOrEqual(2);
  });
});

describe("training jobs", () => {
  it("orders workers by rank with their GPUs", () => {
    const pod = (name: string, rank: string) =>
      obj(name, {
        metadata: { name, annotations: { "tessera.dev/rank": rank, "tessera.dev/gpu-milli": "1000" } },
        spec: { nodeName: "n1" },
        status: { phase: "Running" },
      });
    const rows = workerRows([pod("tj-worker-10", "10"), pod("tj-worker-2", "2")]);
    expect(rows.map((r) => r.rank)).toEqual([2, 10]);
    expect(rows[0]).toMatchObject({ pod: "tj-worker-2", node: "n1", gpuMilli: 1000 });
  });
  it("reads a fixed and an elastic size", () => {
    expect(elasticSize(obj("a", { spec: { replicas: 2 }, status: { worldSize: 2 } }))).toEqual({ min: 2, max: 2, current: 2, elastic: false });
    expect(elasticSize(obj("b", { spec: { minReplicas: 2, maxReplicas: 8 } }))).toEqual({ min: 2, max: 8, current: undefined, elastic: true });
  });
});

describe("gpuSeries", () => {
  it("reads the notebook's hour of GPU use in time order", () => {
    const nb = obj("nb", {
      status: {
        gpuUtilization: {
          history: [
            { time: "2026-01-01T00:01:00Z", percent: 40 },
            { time: "2026-01-01T00:00:00Z", percent: 10 },
          ],
        },
      },
    });
    const t0 = Date.parse("2026-01-01T00:00:00Z") / 1000;
    expect(gpuSeries(nb)).toEqual([[t0, t0 + 60], [10, 40]]);
    expect(gpuSeries(obj("empty"))).toEqual([[], []]);
  });
});
