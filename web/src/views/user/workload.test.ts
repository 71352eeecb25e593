import { describe, expect, it } from "vitest";
import { ApiError } from "../../api/client";
import { splitWords } from "./submit";
import { fieldErrors, ownerOf, placement, summarize } from "./workload";

const pending = {
  metadata: { name: "notebook-nb2", labels: { "tessera.dev/notebook": "nb2" }, creationTimestamp: "2026-12-03T10:39:30Z" },
  spec: {
    queueName: "default",
    podSets: [{ count: 1, template: { spec: { containers: [{ resources: { limits: { "nvidia.com/gpu": "0.25" } } }] } } }],
  },
  status: {
    conditions: [
      { type: "QuotaReserved", status: "False", reason: "QuotaExceeded", message: "ClusterQueue team-nlp: ...; position 3 in ClusterQueue team-nlp" },
    ],
  },
};

describe("workload summaries", () => {
  it("says a pending workload's reason, position and asked GPUs", () => {
    const s = summarize(pending);
    expect(s).toMatchObject({ state: "Pending", reason: "QuotaExceeded", position: 3, milliGpu: 250, queue: "default" });
    expect(s.owner).toEqual({ plural: "notebooks", name: "nb2", kind: "Notebook" });
  });
  it("says where an admitted one runs", () => {
    const w = {
      ...pending,
      status: {
        admission: {
          podSetAssignments: [{ flavors: { "nvidia.com/gpu": "h100" }, placements: [{ node: "vm", devices: [{ index: 1, milli: 1000 }, { index: 0, milli: 1000 }] }] }],
        },
        conditions: [{ type: "Admitted", status: "True", reason: "Admitted", message: "admitted" }],
      },
    };
    expect(placement(w)).toEqual({ where: "vm[0,1]", flavor: "h100", milli: 2000 });
    expect(summarize(w).state).toBe("Admitted");
  });
  it("finds the owner from its reference when no label names it", () => {
    expect(ownerOf({ metadata: { name: "job-a", ownerReferences: [{ kind: "Job", name: "a", controller: true }] } })).toEqual({
      plural: "jobs",
      name: "a",
      kind: "Job",
    });
  });
});

describe("field errors", () => {
  it("reads the field from causes, else from the message", () => {
    expect(fieldErrors(new ApiError(422, "Invalid", "x", [{ field: "spec.gpu", message: "bad" }]))).toEqual([{ field: "spec.gpu", message: "bad" }]);
    expect(fieldErrors(new ApiError(422, "Invalid", 'parameters.cpu: string "abc" is not a quantity'))[0].field).toBe("parameters.cpu");
    expect(
      fieldErrors(new ApiError(422, "Invalid", "template jupyter with these parameters makes an invalid Notebook: spec.gpu: 1.5 GPUs is neither"))[0],
    ).toEqual({ field: "spec.gpu", message: "1.5 GPUs is neither" });
  });
  it("splits a command line with quotes", () => {
    expect(splitWords(`python3 -c "print('hi there')" 'a b'`)).toEqual(["python3", "-c", "print('hi there')", "a b"]);
  });
});
