import { ApiError, type Client, type KubeList, type KubeObject, type Resource, resourcePath } from "./client";

// A live list: list once, then watch from the list's resourceVersion. The server's
// watch (docs/api.md) is newline-delimited JSON events; it resumes without gaps from
// the last revision seen, and answers 410 Expired (as an HTTP status, or as an ERROR
// event) when that revision left its event log: then the list is read again.

export interface WatchEvent<T = KubeObject> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

// Splits a byte stream into lines: feed chunks, get whole lines back; the
// partial last line waits for the next chunk.
export class LineSplitter {
  private rest = "";
  private readonly decoder = new TextDecoder();
  push(chunk: Uint8Array | string): string[] {
    this.rest += typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    const parts = this.rest.split("\n");
    this.rest = parts.pop() ?? "";
    return parts.filter((l) => l.trim() !== "");
  }
  flush(): string[] {
    const last = this.rest.trim();
    this.rest = "";
    return last ? [last] : [];
  }
}

export function parseEvent<T = KubeObject>(line: string): WatchEvent<T> {
  const e = JSON.parse(line) as WatchEvent<T>;
  if (!e || typeof e.type !== "string" || typeof e.object !== "object") {
    throw new Error(`not a watch event: ${line.slice(0, 120)}`);
  }
  return e;
}

export const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

// The objects of a list, kept up to date by events. Pure: the hook and the
// tests both drive it.
export class ObjectCache<T extends KubeObject = KubeObject> {
  readonly items = new Map<string, T>();
  resourceVersion = "";
  reset(list: T[], resourceVersion: string) {
    this.items.clear();
    for (const o of list) this.items.set(keyOf(o), o);
    this.resourceVersion = resourceVersion;
  }
  // Applies one event; returns whether the objects changed.
  apply(e: WatchEvent<T>): boolean {
    const rv = e.object?.metadata?.resourceVersion;
    if (e.type === "BOOKMARK") {
      if (rv) this.resourceVersion = rv;
      return false;
    }
    if (e.type === "ERROR") return false;
    const k = keyOf(e.object);
    if (e.type === "DELETED") this.items.delete(k);
    else this.items.set(k, e.object);
    if (rv) this.resourceVersion = rv;
    return true;
  }
  list(): T[] {
    return [...this.items.values()];
  }
}

// An ERROR event's Status, if it says the revision expired (410).
export function isExpired(e: WatchEvent): boolean {
  if (e.type !== "ERROR") return false;
  const s = e.object as unknown as { code?: number; reason?: string };
  return s.code === 410 || s.reason === "Expired" || s.reason === "Gone";
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  // Called with the whole list after the first list and after each batch of events.
  onChange: (items: KubeObject[]) => void;
  onError: (e: ApiError | Error | null) => void;
  // Batches events into one onChange per frame (default requestAnimationFrame, or 50 ms).
  schedule?: (f: () => void) => void;
}

const defaultSchedule = (f: () => void) =>
  typeof requestAnimationFrame === "function" ? requestAnimationFrame(() => f()) : setTimeout(f, 50);

// Lists asked for ahead of the view that watches them: the app's start asks for
// the list its first page shows while it checks the sign-in and loads the view's
// code (src/early.ts). A watch takes such a list once, when it was asked for with
// the same token, path and selectors in the last few seconds; a failed one is only
// a reason to list again. One not taken is dropped.
const ahead = new Map<string, Promise<KubeList>>();
const AHEAD_MS = 10000;
const aheadKey = (client: Client, path: string, selectors: Record<string, string | undefined>) =>
  `${client.headers().get("Authorization") ?? ""} ${client.url(path, selectors)}`;

export function listAhead(
  client: Client,
  r: Resource,
  namespace: string | undefined,
  selectors: { labelSelector?: string; fieldSelector?: string } = {},
) {
  const key = aheadKey(client, resourcePath(r, namespace), selectors);
  const list = client.list(r, namespace, selectors);
  list.catch(() => {});
  ahead.set(key, list);
  setTimeout(() => ahead.get(key) === list && ahead.delete(key), AHEAD_MS);
}

function takeAhead(client: Client, path: string, selectors: Record<string, string | undefined>) {
  const key = aheadKey(client, path, selectors);
  const list = ahead.get(key);
  ahead.delete(key);
  return list;
}

// Lists and watches until stopped; reconnects after a dropped stream (1 s, then
// up to 10 s), lists again after 410. Returns a stop function.
export function watchList(client: Client, r: Resource, namespace: string | undefined, opts: WatchOptions): () => void {
  const cache = new ObjectCache();
  const abort = new AbortController();
  const schedule = opts.schedule ?? defaultSchedule;
  let pending = false;
  let stopped = false;
  const changed = () => {
    if (pending || stopped) return;
    pending = true;
    schedule(() => {
      pending = false;
      if (!stopped) opts.onChange(cache.list());
    });
  };
  const path = resourcePath(r, namespace);
  const selectors = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };

  let first = true;
  const relist = async () => {
    const early = first ? takeAhead(client, path, selectors) : undefined;
    first = false;
    const list = early
      ? await early.catch(() => client.list(r, namespace, selectors, abort.signal))
      : await client.list(r, namespace, selectors, abort.signal);
    if (stopped) return;
    cache.reset(list.items ?? [], list.metadata?.resourceVersion ?? "");
    opts.onChange(cache.list());
    opts.onError(null);
  };

  const run = async () => {
    let delay = 1000;
    let needList = true;
    while (!stopped) {
      try {
        if (needList) {
          await relist();
          if (stopped) return;
          needList = false;
        }
        const resp = await client.stream(
          path,
          { ...selectors, watch: "true", resourceVersion: cache.resourceVersion },
          abort.signal,
        );
        delay = 1000;
        const reader = resp.body!.getReader();
        const lines = new LineSplitter();
        for (;;) {
          const { value, done } = await reader.read();
          const got = done ? lines.flush() : lines.push(value);
          for (const line of got) {
            const e = parseEvent(line);
            if (isExpired(e)) {
              needList = true;
              break;
            }
            if (cache.apply(e)) changed();
          }
          if (done || needList) break;
        }
        if (needList) await reader.cancel().catch(() => {});
      } catch (e) {
        if (stopped || (e as Error).name === "AbortError") return;
        if (e instanceof ApiError && e.code === 410) {
          needList = true;
          continue;
        }
        opts.onError(e as Error);
        if (e instanceof ApiError && (e.code === 401 || e.code === 403 || e.code === 404)) return;
        await new Promise((res) => setTimeout(res, delay));
        delay = Math.min(delay * 2, 10000);
      }
    }
  };
  void run();
  return () => {
    stopped = true;
    abort.abort();
  };
}
