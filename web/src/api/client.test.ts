import { describe, expect, it } from "vitest";
import { ApiError, Client, errorFromStatus, resourcePath } from "./client";
import { K } from "./kinds";

describe("resourcePath", () => {
  it("builds core, group, namespaced, cluster-scoped and subresource paths", () => {
    expect(resourcePath(K.pods, "team-nlp")).toBe("/api/v1/namespaces/team-nlp/pods");
    expect(resourcePath(K.pods, "team-nlp", "p-1", "log")).toBe("/api/v1/namespaces/team-nlp/pods/p-1/log");
    expect(resourcePath(K.nodes, "ignored", "n1")).toBe("/api/v1/nodes/n1");
    expect(resourcePath(K.clusterQueues)).toBe("/apis/kueue.x-k8s.io/v1beta1/clusterqueues");
    expect(resourcePath(K.templates, undefined, "jupyter", "render")).toBe("/apis/tessera.dev/v1/templates/jupyter/render");
    expect(resourcePath(K.pods, undefined)).toBe("/api/v1/pods");
  });
  it("escapes names", () => {
    expect(resourcePath(K.pods, "a b", "c/d")).toBe("/api/v1/namespaces/a%20b/pods/c%2Fd");
  });
});

describe("Client", () => {
  const recorder = (status: number, body: unknown) => {
    const calls: { url: string; init: RequestInit }[] = [];
    const fetchFn = (async (url: RequestInfo | URL, init?: RequestInit) => {
      calls.push({ url: String(url), init: init ?? {} });
      return new Response(typeof body === "string" ? body : JSON.stringify(body), { status });
    }) as typeof fetch;
    return { calls, fetchFn };
  };

  it("sends the bearer token, JSON bodies, merge patches and dryRun", async () => {
    const { calls, fetchFn } = recorder(201, { metadata: { name: "x" } });
    const c = new Client(() => "secret", "", fetchFn);
    await c.create(K.notebooks, "team-nlp", { metadata: { name: "x" } }, true);
    await c.patch(K.jobs, "team-nlp", "j", { spec: { suspend: true } });
    const h0 = calls[0].init.headers as Headers;
    expect(h0.get("Authorization")).toBe("Bearer secret");
    expect(h0.get("Content-Type")).toBe("application/json");
    expect(calls[0].url).toBe("/apis/tessera.dev/v1/namespaces/team-nlp/notebooks?dryRun=All");
    expect((calls[1].init.headers as Headers).get("Content-Type")).toBe("application/merge-patch+json");
    expect(calls[1].init.method).toBe("PATCH");
  });

  it("turns a Status into an ApiError with its causes, and a 401 signs out", async () => {
    const status = {
      kind: "Status",
      code: 422,
      reason: "Invalid",
      message: 'Notebook.tessera.dev "x" is invalid: spec.gpu: Invalid value',
      details: { causes: [{ field: "spec.gpu", reason: "FieldValueInvalid", message: "Invalid value" }] },
    };
    const { fetchFn } = recorder(422, status);
    const c = new Client(() => null, "", fetchFn);
    const e = await c.create(K.notebooks, "team-nlp", {}).catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe(422);
    expect(e.causes[0].field).toBe("spec.gpu");

    const unauthorized = recorder(401, { kind: "Status", code: 401, message: "token expired at 10:00" });
    const c2 = new Client(() => "t", "", unauthorized.fetchFn);
    let signedOut = "";
    c2.onUnauthorized = (err) => (signedOut = err.message);
    await c2.get(K.pods, "a", "b").catch(() => {});
    expect(signedOut).toBe("token expired at 10:00");
  });

  it("says the server cannot be reached when the fetch fails, and reads a text error", async () => {
    const c = new Client(() => null, "", (async () => {
      throw new TypeError("Failed to fetch");
    }) as typeof fetch);
    await expect(c.get(K.pods, "a", "b")).rejects.toThrow(/cannot be reached/);
    expect(errorFromStatus(500, { message: "" }).message).toBe("the server answered 500");
    const { fetchFn } = recorder(503, "store unavailable\n");
    await expect(new Client(() => null, "", fetchFn).get(K.pods, "a", "b")).rejects.toThrow("store unavailable");
  });
});
