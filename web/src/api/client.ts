// The portal's only way to the server: the public API, the same paths and
// verbs as the CLI and kubectl (docs/api.md). Errors are values the views show
// in plain words; a 401 signs the user out.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { kind: string; name: string; uid?: string; controller?: boolean }[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface KubeObject<Spec = any, Status = any> {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Spec;
  status?: Status;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [extra: string]: any;
}

export interface KubeList<T = KubeObject> {
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface StatusCause {
  field?: string;
  reason?: string;
  message?: string;
}

// A Kubernetes Status, as the server answers every failure.
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly causes: StatusCause[] = [],
  ) {
    super(message);
    this.name = "ApiError";
  }
  get forbidden() {
    return this.code === 403;
  }
  get notFound() {
    return this.code === 404;
  }
}

export function errorFromStatus(code: number, body: unknown): ApiError {
  const s = (body ?? {}) as { reason?: string; message?: string; details?: { causes?: StatusCause[] } };
  const message =
    typeof s.message === "string" && s.message !== ""
      ? s.message
      : code === 0
        ? "the server cannot be reached: is tessera running?"
        : `the server answered ${code}`;
  return new ApiError(code, s.reason ?? "", message, s.details?.causes ?? []);
}

// The message a person reads for any failure.
export function describeError(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

export interface Resource {
  group: string; // "" for the core group
  version: string;
  plural: string;
  namespaced: boolean;
  kind: string;
}

export function resourcePath(
  r: Pick<Resource, "group" | "version" | "plural" | "namespaced">,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const root = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const n = name ? `/${encodeURIComponent(name)}` : "";
  const sub = name && subresource ? `/${subresource}` : "";
  return `${root}${ns}/${r.plural}${n}${sub}`;
}

export type TokenSource = () => string | null;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
}

export class Client {
  onUnauthorized: (e: ApiError) => void = () => {};
  constructor(
    private readonly token: TokenSource,
    private readonly base = "",
    private readonly fetchFn: typeof fetch = (...a) => fetch(...a),
  ) {}

  url(path: string, query?: RequestOptions["query"]): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== "") q.set(k, String(v));
    const qs = q.toString();
    return `${this.base}${path}${qs ? `?${qs}` : ""}`;
  }

  headers(contentType?: string): Headers {
    const h = new Headers({ Accept: "application/json" });
    const t = this.token();
    if (t) h.set("Authorization", `Bearer ${t}`);
    if (contentType) h.set("Content-Type", contentType);
    return h;
  }

  // Any request; the answer's JSON, or an ApiError.
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    let resp: Response;
    try {
      resp = await this.fetchFn(this.url(path, opts.query), {
        method,
        headers: this.headers(opts.body !== undefined ? (opts.contentType ?? "application/json") : undefined),
        body: opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body),
        signal: opts.signal,
      });
    } catch (e) {
      if ((e as Error).name === "AbortError") throw e;
      throw errorFromStatus(0, null);
    }
    const text = await resp.text();
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = resp.ok ? text : { message: text.trim() };
      }
    }
    if (!resp.ok) {
      const err = errorFromStatus(resp.status, body);
      if (resp.status === 401) this.onUnauthorized(err);
      throw err;
    }
    return body as T;
  }

  list<T = KubeObject>(r: Resource, namespace?: string, query?: RequestOptions["query"], signal?: AbortSignal) {
    return this.request<KubeList<T>>("GET", resourcePath(r, namespace), { query, signal });
  }
  get<T = KubeObject>(r: Resource, namespace: string | undefined, name: string, signal?: AbortSignal) {
    return this.request<T>("GET", resourcePath(r, namespace, name), { signal });
  }
  create<T = KubeObject>(r: Resource, namespace: string | undefined, obj: unknown, dryRun = false) {
    return this.request<T>("POST", resourcePath(r, namespace), { body: obj, query: { dryRun: dryRun ? "All" : undefined } });
  }
  patch<T = KubeObject>(r: Resource, namespace: string | undefined, name: string, patch: unknown, subresource?: string) {
    return this.request<T>("PATCH", resourcePath(r, namespace, name, subresource), {
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }
  remove<T = KubeObject>(r: Resource, namespace: string | undefined, name: string) {
    return this.request<T>("DELETE", resourcePath(r, namespace, name));
  }
  post<T = KubeObject>(path: string, body: unknown) {
    return this.request<T>("POST", path, { body });
  }
  // A streamed GET (watches, logs -f): the raw response, for the caller to read.
  async stream(path: string, query: RequestOptions["query"], signal: AbortSignal): Promise<Response> {
    let resp: Response;
    try {
      resp = await this.fetchFn(this.url(path, query), { headers: this.headers(), signal });
    } catch (e) {
      if ((e as Error).name === "AbortError") throw e;
      throw errorFromStatus(0, null);
    }
    if (!resp.ok) {
      const text = await resp.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = { message: text.trim() };
      }
      const err = errorFromStatus(resp.status, body);
      if (resp.status === 401) this.onUnauthorized(err);
      throw err;
    }
    return resp;
  }
}
