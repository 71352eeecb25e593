import { describe, expect, it } from "vitest";
import { alignSeries, buildReview, compareRows, delta, duration, FormError, formFieldOf, policyObjects, teamWaits, type Scenario, type WhatIfStatus } from "./whatif";

const cq = {
  apiVersion: "kueue.x-k8s.io/v1beta1",
  kind: "ClusterQueue",
  metadata: { name: "team-nlp", resourceVersion: "12", uid: "u1" },
  spec: {
    cohort: "research",
    resourceGroups: [
      {
        coveredResources: ["cpu", "nvidia.com/gpu"],
        flavors: [
          { name: "h100", resources: [{ name: "cpu", nominalQuota: 64 }, { name: "nvidia.com/gpu", nominalQuota: 4, borrowingLimit: 4 }] },
          { name: "a100", resources: [{ name: "cpu", nominalQuota: 32 }, { name: "nvidia.com/gpu", nominalQuota: "2" }] },
        ],
      },
    ],
  },
  status: { pendingWorkloads: 3 },
};

const scenario = (s: Partial<Scenario> = {}): Scenario => ({ name: "more", addNodes: "", removeNodes: [], cluster: "", quotas: {}, policyYaml: "", ...s });

describe("the SimulationReview the What-if view sends", () => {
  it("carries the period and only what the scenario changes", () => {
    const r = buildReview({ since: "7d", scenario: scenario({ addNodes: " 2x8xH100-80GB ", removeNodes: ["gpu-3"] }) }, [cq]);
    expect(r).toEqual({
      apiVersion: "tessera.dev/v1",
      kind: "SimulationReview",
      metadata: { name: "" },
      spec: { since: "7d", scenarios: [{ name: "more", addNodes: "2x8xH100-80GB", removeNodes: ["gpu-3"] }] },
    });
  });

  it("sends a changed GPU quota as the whole ClusterQueue, without status or server metadata", () => {
    const r = buildReview({ since: "24h", scenario: scenario({ quotas: { "team-nlp": { h100: "12", a100: "2" } } }) }, [cq]);
    const policy = r.spec.scenarios[0].policy;
    expect(policy).toHaveLength(1);
    expect(policy[0].metadata).toEqual({ name: "team-nlp", labels: undefined });
    expect(policy[0].status).toBeUndefined();
    expect(policy[0].spec.cohort).toBe("research");
    const flavors = policy[0].spec.resourceGroups[0].flavors;
    expect(flavors[0].resources[1]).toEqual({ name: "nvidia.com/gpu", nominalQuota: "12", borrowingLimit: 4 });
    expect(flavors[1].resources[1].nominalQuota).toBe("2");
    // The queue shown is not changed by the copy.
    expect(cq.spec.resourceGroups[0].flavors[0].resources[1].nominalQuota).toBe(4);
  });

  it("sends nothing for a quota box left at its current value", () => {
    const r = buildReview({ since: "24h", scenario: scenario({ quotas: { "team-nlp": { h100: "4" } } }) }, [cq]);
    expect(r.spec.scenarios[0].policy).toBeUndefined();
  });

  it("refuses a quota that is not a number of GPUs, at its box", () => {
    expect(() => buildReview({ since: "24h", scenario: scenario({ quotas: { "team-nlp": { h100: "lots" } } }) }, [cq])).toThrow(FormError);
    try {
      buildReview({ since: "24h", scenario: scenario({ quotas: { "team-nlp": { h100: "-1" } } }) }, [cq]);
    } catch (e) {
      expect((e as FormError).field).toBe("quota/team-nlp/h100");
    }
  });

  it("adds the YAML box's documents, and says which one does not parse", () => {
    const objs = policyObjects("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: l40s}\n---\n---\nkind: LocalQueue\nmetadata: {name: q, namespace: x}\n");
    expect(objs.map((o) => o.kind)).toEqual(["ResourceFlavor", "LocalQueue"]);
    expect(() => policyObjects("kind: [unclosed")).toThrow(/document 1/);
    expect(() => policyObjects("- a list\n")).toThrow(/not an object/);
  });

  it("puts each 422 cause at its form field", () => {
    expect(formFieldOf("spec.since")).toBe("since");
    expect(formFieldOf("spec.scenarios[0].addNodes")).toBe("addNodes");
    expect(formFieldOf("spec.scenarios[0].policy[1].spec.resourceGroups[0]")).toBe("policy");
    expect(formFieldOf("spec.scenarios[0].name")).toBe("");
    expect(formFieldOf("spec")).toBe("");
  });
});

const dist = (mean: number, count = 2) => ({ count, mean, p50: mean, p90: mean, p99: mean, max: mean });
const result = (name: string, wait: number, teams: [string, number][]) => ({
  name,
  nodes: 1,
  gpuMilli: 8000,
  clusterQueues: 2,
  summary: {
    jobs: 2,
    finished: 2,
    unfinished: 0,
    leftOut: 0,
    allocationPercent: 50,
    fragmentationPercent: 0,
    makespanSeconds: 7200,
    jctSeconds: dist(wait + 3600),
    queueingSeconds: dist(wait),
    preemptions: 0,
    lostGpuHours: 0,
    fairness: 1,
  },
  teams: teams.map(([n, w]) => ({ name: n, nominalGpus: 4, jobs: 1, finished: 1, queueingSeconds: dist(w, 1), jctSeconds: dist(w, 1), gpuHoursReceived: 1 })),
  warnings: [],
  series: { t: [0, 3600], allocatedGpuMilli: [8000, 0], pending: [1, 0], running: [1, 0] },
});

describe("what the What-if view draws from the answer", () => {
  const st: WhatIfStatus = {
    since: "2026-12-01T00:00:00Z",
    until: "2026-12-02T00:00:00Z",
    origin: "2026-12-01T08:00:00Z",
    jobs: 2,
    neverRan: 0,
    stillRunning: 0,
    warnings: [],
    observed: { jobs: 2, queueingSeconds: dist(1900), jctSeconds: dist(5500), series: { t: [0, 60, 3600], allocatedGpuMilli: [8000, 8000, 0] } },
    results: [result("current", 1800, [["team-a", 0], ["team-b", 3600]]), result("more", 0, [["team-b", 0]])],
  };

  it("compares each run with the observed one last", () => {
    const rows = compareRows(st);
    expect(rows.map((r) => r.name)).toEqual(["current", "more", "observed"]);
    expect(rows[1].meanWait).toBe(0);
    expect(rows[2].meanWait).toBe(1900);
    expect(rows[0].gpus).toBe(8);
  });

  it("holds each series' value between its points on one time axis", () => {
    const a = alignSeries(Date.parse(st.origin), [
      { t: [0, 100], values: [1, 2] },
      { t: [50], values: [7] },
    ]);
    expect(a.t).toEqual([0, 50, 100].map((t) => Date.parse(st.origin) / 1000 + t));
    expect(a.values).toEqual([
      [1, 1, 2],
      [null, 7, 7],
    ]);
  });

  it("lists each team's mean wait per run, a dash where it had no job", () => {
    expect(teamWaits(st)).toEqual([
      { team: "team-a", waits: [0, undefined] },
      { team: "team-b", waits: [3600, 0] },
    ]);
  });

  it("writes durations and differences as people read them", () => {
    expect(duration(45)).toBe("45s");
    expect(duration(12 * 60)).toBe("12m");
    expect(duration(3.4 * 3600)).toBe("3.4h");
    expect(duration(2.1 * 86400)).toBe("2.1d");
    expect(delta(0, 1800, duration)).toBe("−30m");
    expect(delta(5400, 1800, duration)).toBe("+60m");
    expect(delta(9000, 1800, duration)).toBe("+2.0h");
    expect(delta(60, 60, duration)).toBe("same");
    expect(duration(NaN)).toBe("—");
    expect(delta(NaN, 60, duration)).toBe("—");
  });
});
