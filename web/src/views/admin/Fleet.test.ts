import { describe, expect, it } from "vitest";
import { cellsOf, describeCell } from "./Fleet";

const node = (name: string, ready: boolean, usage: { index: number; utilizationPercent: number }[]) => ({
  metadata: {
    name,
    annotations: {
      "tessera.dev/gpus": JSON.stringify([0, 1, 2].map((index) => ({ index, model: "H100-80GB" }))),
      "tessera.dev/gpu-usage": JSON.stringify(usage),
    },
  },
  status: { capacity: { "nvidia.com/gpu": "3" }, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});
const pod = (name: string, nodeName: string, devices: string, milli: number, phase = "Running") => ({
  metadata: {
    name: `${name}-main-0`,
    namespace: "team-nlp",
    labels: { "tessera.dev/workload": name },
    annotations: { "tessera.dev/gpu-devices": devices, "tessera.dev/gpu-milli": String(milli) },
  },
  spec: { nodeName },
  status: { phase },
});

describe("the fleet heatmap's cells", () => {
  it("shows shares, busy, idle and free devices", () => {
    const cells = cellsOf(
      [node("n1", true, [{ index: 0, utilizationPercent: 2 }, { index: 1, utilizationPercent: 80 }])],
      [pod("job-a", "n1", "0", 1000), pod("job-q", "n1", "1", 250), pod("job-h", "n1", "1", 500), pod("job-done", "n1", "2", 1000, "Succeeded")],
    ).get("n1")!;
    expect(cells.map((c) => c.state)).toEqual(["idle", "busy", "free"]);
    expect(cells[1].shares.map((s) => s.milli)).toEqual([250, 500]);
    expect(describeCell(cells[0])).toBe("n1 gpu 0: allocated 1 to team-nlp/job-a, 2% used (allocated but idle)");
    expect(describeCell(cells[1])).toBe("n1 gpu 1: allocated 0.25 to team-nlp/job-q, 0.5 to team-nlp/job-h, 80% used");
  });
  it("splits a multi-GPU pod's share over its devices and marks NotReady nodes", () => {
    const cells = cellsOf([node("n2", false, [])], [pod("job-b", "n2", "0,1", 2000)]).get("n2")!;
    expect(cells.map((c) => [c.state, c.allocated])).toEqual([["notready", 1000], ["notready", 1000], ["notready", 0]]);
  });
});
