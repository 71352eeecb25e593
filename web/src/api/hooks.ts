import { useEffect, useRef, useState } from "react";
import { useSession } from "../auth/session";
import type { ApiError, KubeObject, Resource } from "./client";
import { watchList } from "./watch";

export interface Live<T> {
  items: T[];
  loading: boolean;
  error: ApiError | Error | null;
}

// A list that stays live (list + watch). Each one holds a connection: browsers
// open six per host over HTTP/1.1, so a view watches only what must be live
// and reads the rest with useSnapshot.
export function useWatch<T extends KubeObject = KubeObject>(
  r: Resource | null,
  namespace?: string,
  opts: { labelSelector?: string; fieldSelector?: string } = {},
): Live<T> {
  const { client } = useSession();
  const [state, setState] = useState<Live<T>>({ items: [], loading: true, error: null });
  const { labelSelector, fieldSelector } = opts;
  useEffect(() => {
    if (!r) return;
    // (the state it starts with, kept as it is: no render for nothing on mount)
    setState((s) => (s.loading && !s.error && s.items.length === 0 ? s : { items: [], loading: true, error: null }));
    return watchList(client, r, namespace, {
      labelSelector,
      fieldSelector,
      onChange: (items) => setState({ items: items as T[], loading: false, error: null }),
      onError: (error) => error && setState((s) => ({ ...s, loading: false, error })),
    });
  }, [client, r, namespace, labelSelector, fieldSelector]);
  return state;
}

// One object, live: a watch on its name.
export function useObject<T extends KubeObject = KubeObject>(r: Resource | null, namespace: string | undefined, name: string) {
  const live = useWatch<T>(r, namespace, { fieldSelector: `metadata.name=${name}` });
  const object = live.items[0];
  const error =
    live.error ?? (!live.loading && !object ? (new Error(`${r?.kind ?? "object"} "${name}" not found`) as Error) : null);
  return { object, loading: live.loading, error };
}

// Something read once and again every `everyMs` (default 5 s): for what may lag.
export function useSnapshot<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], everyMs = 5000) {
  const [state, setState] = useState<{ data?: T; loading: boolean; error: ApiError | Error | null }>({
    loading: true,
    error: null,
  });
  const loadRef = useRef(load);
  loadRef.current = load;
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const once = async () => {
      try {
        const data = await loadRef.current(abort.signal);
        setState({ data, loading: false, error: null });
      } catch (e) {
        if ((e as Error).name === "AbortError") return;
        setState((s) => ({ ...s, loading: false, error: e as Error }));
      }
      if (everyMs > 0) timer = setTimeout(once, everyMs);
    };
    void once();
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick, everyMs]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}
