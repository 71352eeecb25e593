// A PipelineRun: its DAG (dagre's layout, drawn in SVG), each node coloured by
// its state with how long it ran; a node chosen shows its Job and its result.
// A Pipeline: its DAG and its runs.
import { Anchor, Code, Group, ScrollArea, Stack, Table, Text } from "@mantine/core";
import { useMemo, useState, type KeyboardEvent } from "react";
import { Link } from "react-router-dom";
import type { KubeObject } from "../../../api/client";
import { useSnapshot } from "../../../api/hooks";
import { K } from "../../../api/kinds";
import { useSession } from "../../../auth/session";
import { Empty, ErrorNote, Loading, StateBadge } from "../../../ui/common";
import { age } from "../../../ui/format";
import classes from "./dag.module.css";
import { layoutDag } from "./dagLayout";
import type { PanelProps } from "./index";
import { Facts, Section, useNow } from "./parts";
import { duration, itemText, pipelineNodes, runSpec, type StepNode } from "./shape";

// Each node state's colour (Mantine colour names; light fill, filled border).
const STATE_COLOR: Record<string, string> = {
  Pending: "gray",
  Running: "blue",
  Succeeded: "teal",
  Cached: "grape",
  Failed: "red",
  Skipped: "yellow",
  Omitted: "dark",
};
const DONE = new Set(["Succeeded", "Cached", "Failed", "Skipped", "Omitted"]);

export function PipelineRunPanel({ object: run, namespace }: PanelProps) {
  const now = useNow();
  const nodes = useMemo(() => pipelineNodes(runSpec(run), run.status?.nodes), [run]);
  const [chosen, setChosen] = useState<string | undefined>();
  const node = nodes.find((n) => n.id === chosen);
  const done = nodes.filter((n) => DONE.has(n.phase)).length;
  const st = run.status ?? {};
  return (
    <Stack gap="md" data-testid="panel-pipelineruns">
      <Section title="Run">
        <Facts
          facts={[
            { label: "Pipeline", value: run.spec?.pipelineRef?.name ? <Link to={`/ns/${namespace}/pipelines/${run.spec.pipelineRef.name}`}>{run.spec.pipelineRef.name}</Link> : "inline spec" },
            { label: "Steps done", value: `${done} of ${nodes.length}` },
            { label: "Started", value: st.startedAt ? `${age(st.startedAt, now)} ago` : "" },
            { label: "Duration", value: duration(st.startedAt, st.finishedAt, now) },
            ...(run.spec?.resumeFrom ? [{ label: "Resumed from", value: <Link to={`/ns/${namespace}/pipelineruns/${run.spec.resumeFrom}`}>{run.spec.resumeFrom}</Link> }] : []),
            ...(Object.keys(st.parameters ?? {}).length
              ? [{ label: "Parameters", value: Object.entries(st.parameters).map(([k, v]) => `${k}=${String(v)}`).join(", ") }]
              : []),
          ]}
        />
      </Section>
      <Section title="Steps" testId="pipeline-dag">
        {nodes.length === 0 ? (
          <Empty>{run.status?.phase === "Pending" ? run.status?.message || "The run has not started." : "No steps."}</Empty>
        ) : (
          <>
            <Dag nodes={nodes} chosen={chosen} onChoose={(id) => setChosen(id === chosen ? undefined : id)} now={now} stateful />
            <Legend />
          </>
        )}
      </Section>
      {node && <StepDetail node={node} namespace={namespace} now={now} />}
    </Stack>
  );
}

export function PipelinePanel({ object: pipeline, namespace }: PanelProps) {
  const nodes = useMemo(() => pipelineNodes(pipeline.spec), [pipeline]);
  return (
    <Stack gap="md" data-testid="panel-pipelines">
      <Section title="Steps">
        {nodes.length === 0 ? <Empty>No steps.</Empty> : <Dag nodes={nodes} now={Date.now()} stateful={false} />}
      </Section>
      <Section title="Runs">
        <RunsOf pipeline={pipeline.metadata.name} namespace={namespace} />
      </Section>
    </Stack>
  );
}

function nodeLabel(n: StepNode, stateful: boolean, now: number): string {
  const item = n.item !== undefined ? ` (item ${itemText(n.item)})` : "";
  if (!stateful) return `step ${n.id}${item}${n.deps.length ? `, after ${n.deps.join(", ")}` : ""}`;
  const took = n.startedAt ? duration(n.startedAt, n.finishedAt, now) : "";
  return `step ${n.id}${item}: ${n.phase}${took ? `, ${took}` : ""}`;
}

function Dag(props: { nodes: StepNode[]; chosen?: string; onChoose?: (id: string) => void; now: number; stateful: boolean }) {
  const { nodes, chosen, onChoose, now, stateful } = props;
  const g = useMemo(() => layoutDag(nodes), [nodes]);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const key = (id: string) => (e: KeyboardEvent) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      onChoose?.(id);
    }
  };
  return (
    <ScrollArea type="auto">
      <svg
        width={g.width}
        height={g.height}
        viewBox={`0 0 ${g.width} ${g.height}`}
        role="group"
        aria-label={`The pipeline's DAG: ${nodes.length} nodes`}
        style={{ display: "block", margin: "0 auto" }}
      >
        <defs>
          <marker id="dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill="var(--mantine-color-dimmed)" />
          </marker>
        </defs>
        {g.edges.map((e) => (
          <path
            key={`${e.from}->${e.to}`}
            d={e.points.map((p, i) => `${i ? "L" : "M"}${p.x},${p.y}`).join(" ")}
            fill="none"
            stroke="var(--mantine-color-dimmed)"
            strokeWidth={1.5}
            markerEnd="url(#dag-arrow)"
            aria-hidden="true"
          />
        ))}
        {g.nodes.map((p) => {
          const n = byId.get(p.id)!;
          const color = stateful ? (STATE_COLOR[n.phase] ?? "gray") : "blue";
          const selected = chosen === n.id;
          const took = stateful && n.startedAt ? duration(n.startedAt, n.finishedAt, now) : "";
          const sub = stateful ? [n.phase, took].filter(Boolean).join(" · ") : n.item !== undefined ? `item ${itemText(n.item)}` : "";
          return (
            <g
              key={n.id}
              transform={`translate(${p.x - p.width / 2},${p.y - p.height / 2})`}
              role={onChoose ? "button" : "img"}
              tabIndex={onChoose ? 0 : undefined}
              aria-label={nodeLabel(n, stateful, now)}
              aria-pressed={onChoose ? selected : undefined}
              data-testid="dag-node"
              data-node={n.id}
              data-state={stateful ? n.phase : undefined}
              onClick={onChoose ? () => onChoose(n.id) : undefined}
              onKeyDown={onChoose ? key(n.id) : undefined}
              className={onChoose ? classes.node : undefined}
            >
              <title>{nodeLabel(n, stateful, now)}</title>
              <rect
                className={classes.box}
                width={p.width}
                height={p.height}
                rx={8}
                fill={`var(--mantine-color-${color}-light)`}
                stroke={`var(--mantine-color-${color}-filled)`}
                strokeWidth={selected ? 3 : 1.5}
              />
              <text x={12} y={21} fontSize={13} fontWeight={600} fill="var(--mantine-color-text)">
                {truncate(n.id, 22)}
              </text>
              <text x={12} y={39} fontSize={12} fill={`var(--mantine-color-${color}-light-color)`}>
                {truncate(sub, 26)}
              </text>
            </g>
          );
        })}
      </svg>
    </ScrollArea>
  );
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function Legend() {
  return (
    <Group gap="md" aria-label="Colours of the node states" role="list">
      {Object.entries(STATE_COLOR).map(([state, color]) => (
        <Group gap={6} key={state} role="listitem">
          <svg width="14" height="14" aria-hidden="true">
            <rect width="14" height="14" rx="3" fill={`var(--mantine-color-${color}-light)`} stroke={`var(--mantine-color-${color}-filled)`} />
          </svg>
          <Text size="xs">{state}</Text>
        </Group>
      ))}
    </Group>
  );
}

function StepDetail({ node, namespace, now }: { node: StepNode; namespace: string; now: number }) {
  return (
    <Section title={`Step ${node.id}`} testId="step-detail">
      <Facts
        facts={[
          { label: "State", value: <StateBadge state={node.phase} /> },
          { label: "Attempts", value: String(node.attempts) },
          { label: "Started", value: node.startedAt ? `${age(node.startedAt, now)} ago` : "" },
          { label: "Duration", value: node.startedAt ? duration(node.startedAt, node.finishedAt, now) : "" },
          ...(node.item !== undefined ? [{ label: "Item", value: <Code>{itemText(node.item)}</Code> }] : []),
          ...(node.when ? [{ label: "When", value: <Code>{node.when}</Code> }] : []),
        ]}
      />
      {node.message && <Text size="sm">{node.message}</Text>}
      <div>
        <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
          Result
        </Text>
        {node.result ? (
          <Code block aria-label={`Result of ${node.id}`}>
            {node.result}
          </Code>
        ) : (
          <Text size="sm" c="dimmed">
            {DONE.has(node.phase) ? "It wrote no result ($TESSERA_OUTPUT_DIR/result)." : "Not yet: a result comes when the step ends."}
          </Text>
        )}
      </div>
      {node.job ? <StepJob job={node.job} namespace={namespace} /> : <Text size="sm" c="dimmed">No Job yet.</Text>}
    </Section>
  );
}

function StepJob({ job, namespace }: { job: string; namespace: string }) {
  const { client } = useSession();
  const snap = useSnapshot<KubeObject>((signal) => client.get(K.jobs, namespace, job, signal), [client, namespace, job]);
  const st = snap.data?.status ?? {};
  const cond = ((st.conditions ?? []) as { type: string; status: string; reason?: string; message?: string }[]).find(
    (c) => c.status === "True" && (c.type === "Complete" || c.type === "Failed" || c.type === "Suspended"),
  );
  return (
    <Stack gap={4}>
      <Group gap="xs">
        <Text size="sm">Job</Text>
        <Anchor component={Link} to={`/ns/${namespace}/jobs/${job}`} size="sm" ff="monospace">
          {job}
        </Anchor>
      </Group>
      {snap.loading ? (
        <Loading what="its Job" />
      ) : snap.error ? (
        <ErrorNote error={snap.error} title="Its Job cannot be read" />
      ) : (
        <Text size="sm" c="dimmed">
          {st.active ?? 0} active, {st.succeeded ?? 0} succeeded, {st.failed ?? 0} failed
          {cond ? ` · ${cond.type}${cond.reason ? ` (${cond.reason})` : ""}${cond.message ? `: ${cond.message}` : ""}` : ""}
        </Text>
      )}
    </Stack>
  );
}

function RunsOf({ pipeline, namespace }: { pipeline: string; namespace: string }) {
  const { client } = useSession();
  const runs = useSnapshot(
    async (signal) =>
      (await client.list(K.pipelineRuns, namespace, undefined, signal)).items.filter((r) => r.spec?.pipelineRef?.name === pipeline),
    [client, namespace, pipeline],
  );
  const now = useNow();
  if (runs.loading) return <Loading what="its runs" />;
  if (runs.error) return <ErrorNote error={runs.error} />;
  const list = [...(runs.data ?? [])].sort((a, b) =>
    (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""),
  );
  if (list.length === 0) return <Empty>No run of {pipeline} yet.</Empty>;
  return (
    <Table striped aria-label="Runs">
      <Table.Thead>
        <Table.Tr>
          <Table.Th scope="col">Run</Table.Th>
          <Table.Th scope="col">State</Table.Th>
          <Table.Th scope="col">Steps done</Table.Th>
          <Table.Th scope="col">Duration</Table.Th>
          <Table.Th scope="col">Age</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {list.map((r) => {
          const nodes = pipelineNodes(runSpec(r), r.status?.nodes);
          return (
            <Table.Tr key={r.metadata.name}>
              <Table.Td>
                <Link to={`/ns/${namespace}/pipelineruns/${r.metadata.name}`}>{r.metadata.name}</Link>
              </Table.Td>
              <Table.Td>
                <StateBadge state={r.status?.phase ?? "Pending"} />
              </Table.Td>
              <Table.Td>
                {nodes.filter((n) => DONE.has(n.phase)).length} of {nodes.length}
              </Table.Td>
              <Table.Td>{duration(r.status?.startedAt, r.status?.finishedAt, now) || "—"}</Table.Td>
              <Table.Td>{age(r.metadata.creationTimestamp, now)}</Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}
