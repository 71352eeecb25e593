import { describe, expect, it } from "vitest";
import { ApiError, Client, type KubeObject } from "./client";
import { K } from "./kinds";
import { isExpired, LineSplitter, listAhead, ObjectCache, parseEvent, watchList } from "./watch";

const obj = (name: string, rv: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  metadata: { name, namespace: "team-nlp", resourceVersion: rv },
  ...extra,
});

describe("LineSplitter", () => {
  it("joins lines split across chunks and keeps the partial last one", () => {
    const s = new LineSplitter();
    const enc = new TextEncoder();
    expect(s.push(enc.encode('{"a":1}\n{"b"'))).toEqual(['{"a":1}']);
    expect(s.push(enc.encode(':2}\n\n{"c":3}'))).toEqual(['{"b":2}']);
    expect(s.flush()).toEqual(['{"c":3}']);
    expect(s.flush()).toEqual([]);
  });
  it("decodes a multi-byte character split between chunks", () => {
    const s = new LineSplitter();
    const bytes = new TextEncoder().encode('"café"\n');
    expect(s.push(bytes.slice(0, 4))).toEqual([]);
    expect(s.push(bytes.slice(4))).toEqual(['"café"']);
  });
});

describe("parseEvent", () => {
  it("reads an event and refuses what is not one", () => {
    expect(parseEvent('{"type":"ADDED","object":{"metadata":{"name":"a"}}}').type).toBe("ADDED");
    expect(() => parseEvent('{"kind":"Status"}')).toThrow(/not a watch event/);
  });
  it("knows an expired revision", () => {
    expect(isExpired({ type: "ERROR", object: { code: 410, reason: "Expired" } as unknown as KubeObject })).toBe(true);
    expect(isExpired({ type: "MODIFIED", object: obj("a", "1") })).toBe(false);
  });
});

describe("ObjectCache", () => {
  it("applies added, modified and deleted events and follows the revision", () => {
    const c = new ObjectCache();
    c.reset([obj("a", "1"), obj("b", "2")], "2");
    expect(c.apply({ type: "MODIFIED", object: obj("a", "3", { status: { x: 1 } }) })).toBe(true);
    expect(c.apply({ type: "ADDED", object: obj("c", "4") })).toBe(true);
    expect(c.apply({ type: "DELETED", object: obj("b", "5") })).toBe(true);
    expect(c.list().map((o) => o.metadata.name).sort()).toEqual(["a", "c"]);
    expect(c.items.get("team-nlp/a")?.status).toEqual({ x: 1 });
    expect(c.resourceVersion).toBe("5");
    expect(c.apply({ type: "BOOKMARK", object: obj("", "9") })).toBe(false);
    expect(c.resourceVersion).toBe("9");
  });
});

// A fake server: answers lists and watches from scripted responses, and records
// what was asked.
function fakeServer(script: ((url: URL) => Response | Promise<Response>)[]) {
  const asked: URL[] = [];
  const fetchFn = (async (input: RequestInfo | URL) => {
    const url = new URL(String(input), "http://x");
    asked.push(url);
    const next = script.shift();
    if (!next) return new Promise<Response>(() => {}); // a watch that stays open
    return next(url);
  }) as typeof fetch;
  return { asked, client: new Client(() => "tok", "", fetchFn) };
}
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const stream = (...lines: unknown[]) => new Response(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
const list = (rv: string, ...items: KubeObject[]) => json({ metadata: { resourceVersion: rv }, items });
const until = async (f: () => boolean) => {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(f()).toBe(true);
};

describe("watchList", () => {
  it("lists, then watches from the list's revision, and batches events", async () => {
    const { asked, client } = fakeServer([
      () => list("10", obj("a", "7")),
      () => stream({ type: "ADDED", object: obj("b", "11") }, { type: "MODIFIED", object: obj("a", "12") }),
    ]);
    const seen: string[][] = [];
    const stop = watchList(client, K.workloads, "team-nlp", {
      onChange: (items) => seen.push(items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort()),
      onError: () => {},
      schedule: (f) => setTimeout(f, 0),
    });
    await until(() => seen.length >= 2);
    stop();
    expect(seen[0]).toEqual(["a@7"]);
    // Two events, one change.
    expect(seen[1]).toEqual(["a@12", "b@11"]);
    expect(asked[0].pathname).toBe("/apis/kueue.x-k8s.io/v1beta1/namespaces/team-nlp/workloads");
    expect(asked[1].searchParams.get("watch")).toBe("true");
    expect(asked[1].searchParams.get("resourceVersion")).toBe("10");
  });

  it("resumes a dropped watch from the last revision it saw, without listing again", async () => {
    const { asked, client } = fakeServer([
      () => list("10"),
      () => stream({ type: "ADDED", object: obj("b", "11") }),
      () => stream({ type: "ADDED", object: obj("c", "13") }),
    ]);
    const names: string[][] = [];
    const stop = watchList(client, K.workloads, "team-nlp", {
      onChange: (items) => names.push(items.map((o) => o.metadata.name).sort()),
      onError: () => {},
      schedule: (f) => setTimeout(f, 0),
    });
    await until(() => names.some((n) => n.includes("c")));
    stop();
    expect(asked[2].searchParams.get("resourceVersion")).toBe("11");
    expect(asked.filter((u) => !u.searchParams.has("watch"))).toHaveLength(1);
  });

  it("lists again when the revision expired (410 status, or an ERROR event)", async () => {
    const { asked, client } = fakeServer([
      () => list("10", obj("a", "5")),
      () => json({ kind: "Status", code: 410, reason: "Expired", message: "too old resource version" }, 410),
      () => list("20", obj("z", "20")),
      () => stream({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } }),
      () => list("30", obj("y", "30")),
    ]);
    const names: string[][] = [];
    const stop = watchList(client, K.workloads, "team-nlp", {
      onChange: (items) => names.push(items.map((o) => o.metadata.name)),
      onError: () => {},
      schedule: (f) => setTimeout(f, 0),
    });
    await until(() => names.length >= 3);
    stop();
    // The list after each expiry replaces what was there: "a" is gone.
    expect(names).toEqual([["a"], ["z"], ["y"]]);
    expect(asked.filter((u) => !u.searchParams.has("watch"))).toHaveLength(3);
  });

  it("takes a list asked for ahead once, and watches from its revision", async () => {
    const script = [() => list("10", obj("a", "7"))];
    const { asked, client } = fakeServer(script);
    listAhead(client, K.workloads, "team-nlp");
    expect(asked).toHaveLength(1);
    const seen: string[][] = [];
    const stop = watchList(client, K.workloads, "team-nlp", {
      onChange: (items) => seen.push(items.map((o) => o.metadata.name)),
      onError: () => {},
      schedule: (f) => setTimeout(f, 0),
    });
    await until(() => asked.length >= 2);
    stop();
    expect(seen).toEqual([["a"]]);
    expect(asked[1].searchParams.get("watch")).toBe("true");
    expect(asked[1].searchParams.get("resourceVersion")).toBe("10");
    // Taken: the next watch of the same list reads it itself.
    script.push(() => list("12", obj("b", "12")));
    const again: string[][] = [];
    const stop2 = watchList(client, K.workloads, "team-nlp", {
      onChange: (items) => again.push(items.map((o) => o.metadata.name)),
      onError: () => {},
    });
    await until(() => again.length >= 1);
    stop2();
    expect(again).toEqual([["b"]]);
    expect(asked.filter((u) => !u.searchParams.has("watch"))).toHaveLength(2);
  });

  it("lists itself when the list asked for ahead failed, or was asked with another token or selector", async () => {
    const failed = fakeServer([() => json({ kind: "Status", code: 500, message: "no" }, 500), () => list("3", obj("c", "3"))]);
    listAhead(failed.client, K.workloads, "team-nlp");
    const names: string[][] = [];
    const stop = watchList(failed.client, K.workloads, "team-nlp", {
      onChange: (items) => names.push(items.map((o) => o.metadata.name)),
      onError: () => {},
    });
    await until(() => names.length >= 1);
    stop();
    expect(names).toEqual([["c"]]);

    const other = fakeServer([() => list("1", obj("theirs", "1"))]);
    listAhead(new Client(() => "someone-else", "", (...a) => other.client["fetchFn"](...a)), K.workloads, "team-nlp");
    listAhead(other.client, K.workloads, "team-nlp", { labelSelector: "x=y" });
    const mine = fakeServer([() => list("2", obj("mine", "2"))]);
    const got: string[][] = [];
    const stop2 = watchList(mine.client, K.workloads, "team-nlp", {
      onChange: (items) => got.push(items.map((o) => o.metadata.name)),
      onError: () => {},
    });
    await until(() => got.length >= 1);
    stop2();
    expect(got).toEqual([["mine"]]);
  });

  it("stops and reports a refusal (403) without retrying", async () => {
    const { asked, client } = fakeServer([
      () =>
        json(
          { kind: "Status", code: 403, reason: "Forbidden", message: 'workloads.kueue.x-k8s.io is forbidden: User "bob" cannot list' },
          403,
        ),
    ]);
    let error: unknown = null;
    const stop = watchList(client, K.workloads, "team-nlp", {
      onChange: () => {},
      onError: (e) => (error = e),
    });
    await until(() => error !== null);
    stop();
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).forbidden).toBe(true);
    expect((error as ApiError).message).toMatch(/cannot list/);
    await new Promise((r) => setTimeout(r, 50));
    expect(asked).toHaveLength(1);
  });
});
