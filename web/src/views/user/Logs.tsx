import { Code, Group, ScrollArea, Select, Switch, Text } from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import type { KubeObject } from "../../api/client";
import { LineSplitter } from "../../api/watch";
import { useSession } from "../../auth/session";
import { describeError } from "../../api/client";

const MAX_LINES = 5000;

// A pod's log, streamed with follow (GET .../pods/P/log?follow=true), stopped when
// the view goes away or the pod or container changes.
export function Logs({ ns, pods }: { ns: string; pods: KubeObject[] }) {
  const { client } = useSession();
  const [pod, setPod] = useState<string | null>(null);
  const [container, setContainer] = useState<string | null>(null);
  const [follow, setFollow] = useState(true);
  const [lines, setLines] = useState<string[]>([]);
  const [note, setNote] = useState("");
  const viewport = useRef<HTMLDivElement>(null);
  const names = pods.map((p) => p.metadata.name);
  const current = pods.find((p) => p.metadata.name === pod);
  const containers: string[] = (current?.spec?.containers ?? []).map((c: { name: string }) => c.name);
  useEffect(() => {
    if (!pod || !names.includes(pod)) setPod(names[0] ?? null);
  }, [names.join(","), pod]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (containers.length && (!container || !containers.includes(container))) setContainer(containers[0]);
  }, [containers.join(","), container]); // eslint-disable-line react-hooks/exhaustive-deps
  const phase = current?.status?.phase;
  useEffect(() => {
    if (!pod) return;
    const abort = new AbortController();
    setLines([]);
    setNote("");
    const live = follow && (phase === "Running" || phase === "Pending");
    (async () => {
      try {
        const resp = await client.stream(
          `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/log`,
          { follow: live ? "true" : undefined, container: container ?? undefined, tailLines: 2000 },
          abort.signal,
        );
        const reader = resp.body!.getReader();
        const split = new LineSplitter();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const got = split.push(value);
          if (got.length) setLines((l) => [...l, ...got].slice(-MAX_LINES));
        }
        const last = split.flush();
        if (last.length) setLines((l) => [...l, ...last].slice(-MAX_LINES));
        if (live) setNote("The log ended (the container stopped).");
      } catch (e) {
        if ((e as Error).name !== "AbortError") setNote(describeError(e));
      }
    })();
    return () => abort.abort();
  }, [client, ns, pod, container, follow, phase]);
  useEffect(() => {
    if (follow) viewport.current?.scrollTo({ top: viewport.current.scrollHeight });
  }, [lines, follow]);
  if (!pods.length) return <Text c="dimmed">No pods yet: logs appear when a pod starts.</Text>;
  return (
    <div>
      <Group mb="xs">
        <Select aria-label="Pod" label="Pod" data={names} value={pod} onChange={setPod} allowDeselect={false} w={320} size="xs" />
        {containers.length > 1 && (
          <Select aria-label="Container" label="Container" data={containers} value={container} onChange={setContainer} allowDeselect={false} size="xs" />
        )}
        <Switch label="Follow" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} mt="lg" />
      </Group>
      <ScrollArea h={360} viewportRef={viewport} type="auto">
        <Code block data-testid="logs" aria-label="Log" aria-live="off">
          {lines.length ? lines.join("\n") : "(no output yet)"}
        </Code>
      </ScrollArea>
      {note && (
        <Text size="xs" c="dimmed" mt={4}>
          {note}
        </Text>
      )}
    </div>
  );
}
