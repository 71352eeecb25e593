import { Badge, Box, Card, Group, Modal, SimpleGrid, Stack, Text, Tooltip, UnstyledButton } from "@mantine/core";
import { useMemo, useState } from "react";
import type { KubeObject } from "../../api/client";
import { useWatch } from "../../api/hooks";
import { K } from "../../api/kinds";
import { Empty, Loading } from "../../ui/common";
import { gpus, milliGpu, pct } from "../../ui/format";
import { DataTable, Page, ReadError } from "./parts";

// Every node's GPUs as a heatmap: who holds each device and how much of it (the
// scheduler's tessera.dev/gpu-devices and gpu-milli on each pod), and what the
// agent last sampled (the Node's tessera.dev/gpu-usage annotation). Allocated
// but idle (under 5 %, the idle-notebook threshold) stands out.

export type CellState = "free" | "busy" | "idle" | "notready";
const IDLE_BELOW = 5;

export interface Share {
  pod: string;
  namespace: string;
  workload: string;
  milli: number;
}

export interface Cell {
  node: string;
  index: number;
  model: string;
  shares: Share[];
  allocated: number; // milli
  util?: number; // percent
  memUsed?: number;
  memTotal?: number;
  state: CellState;
}

function parseJson<T>(s: string | undefined): T | undefined {
  if (!s) return undefined;
  try {
    return JSON.parse(s) as T;
  } catch {
    return undefined;
  }
}

export const nodeReady = (n: KubeObject) =>
  (n.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True") &&
  !n.spec?.unschedulable;

export function cellsOf(nodes: KubeObject[], pods: KubeObject[]): Map<string, Cell[]> {
  const byNode = new Map<string, Cell[]>();
  for (const n of [...nodes].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const a = n.metadata.annotations ?? {};
    const inv = parseJson<{ index: number; model?: string; memoryBytes?: number }[]>(a["tessera.dev/gpus"]) ?? [];
    const usage = parseJson<{ index: number; utilizationPercent?: number; memoryUsedBytes?: number }[]>(a["tessera.dev/gpu-usage"]) ?? [];
    const count = Math.max(inv.length, Math.round(milliGpu(n.status?.capacity?.["nvidia.com/gpu"]) / 1000));
    const ready = nodeReady(n);
    const cells: Cell[] = [];
    for (let i = 0; i < count; i++) {
      const d = inv.find((x) => x.index === i) ?? inv[i];
      const index = d?.index ?? i;
      const u = usage.find((x) => x.index === index);
      cells.push({
        node: n.metadata.name,
        index,
        model: d?.model ?? n.metadata.labels?.["nvidia.com/gpu.product"] ?? "GPU",
        shares: [],
        allocated: 0,
        util: u?.utilizationPercent,
        memUsed: u?.memoryUsedBytes,
        memTotal: d?.memoryBytes,
        state: ready ? "free" : "notready",
      });
    }
    byNode.set(n.metadata.name, cells);
  }
  for (const p of pods) {
    const cells = byNode.get(p.spec?.nodeName ?? "");
    const devices = p.metadata.annotations?.["tessera.dev/gpu-devices"];
    if (!cells || !devices || ["Succeeded", "Failed"].includes(p.status?.phase)) continue;
    const indices = devices.split(",").map((s) => parseInt(s, 10));
    const milli = parseInt(p.metadata.annotations?.["tessera.dev/gpu-milli"] ?? "0", 10) / indices.length;
    for (const i of indices) {
      const c = cells.find((x) => x.index === i);
      if (!c) continue;
      c.shares.push({
        pod: p.metadata.name,
        namespace: p.metadata.namespace ?? "",
        workload: p.metadata.labels?.["tessera.dev/workload"] ?? p.metadata.name,
        milli,
      });
      c.allocated += milli;
    }
  }
  for (const cells of byNode.values())
    for (const c of cells)
      if (c.state !== "notready" && c.allocated > 0) c.state = (c.util ?? 0) < IDLE_BELOW ? "idle" : "busy";
  return byNode;
}

export function describeCell(c: Cell): string {
  const who = c.shares.map((s) => `${gpus(s.milli)} to ${s.namespace}/${s.workload}`).join(", ");
  const used = c.util === undefined ? "no utilisation sample" : `${Math.round(c.util)}% used`;
  const head = `${c.node} gpu ${c.index}`;
  if (c.state === "notready") return `${head}: node not ready${who ? `, allocated ${who}` : ""}`;
  if (c.allocated === 0) return `${head}: free, ${used}`;
  return `${head}: allocated ${who}, ${used}${c.state === "idle" ? " (allocated but idle)" : ""}`;
}

const STYLE: Record<CellState, { bg: string; label: string; text: string }> = {
  free: { bg: "var(--mantine-color-gray-light)", label: "Free", text: "free" },
  busy: { bg: "var(--mantine-color-teal-filled)", label: "Busy", text: "busy" },
  idle: { bg: "var(--mantine-color-orange-filled)", label: "Allocated but idle (< 5 %)", text: "IDLE" },
  notready: { bg: "var(--mantine-color-red-light)", label: "Node not ready", text: "n/a" },
};
const STRIPES = "repeating-linear-gradient(45deg, rgba(0,0,0,.28) 0 6px, transparent 6px 12px)";
const SHARE_COLORS = ["blue", "grape", "cyan", "indigo", "lime", "pink"];

function Swatch({ state }: { state: CellState }) {
  return (
    <Box
      w={18}
      h={18}
      style={{ background: state === "idle" ? `${STRIPES}, ${STYLE[state].bg}` : STYLE[state].bg, borderRadius: 3, border: "1px solid var(--mantine-color-default-border)" }}
    />
  );
}

function GpuCell({ c, onOpen }: { c: Cell; onOpen: () => void }) {
  const s = STYLE[c.state];
  const label = describeCell(c);
  return (
    <Tooltip label={label} multiline w={300}>
      <UnstyledButton
        onClick={onOpen}
        aria-label={label}
        data-state={c.state}
        data-testid={`gpu-${c.node}-${c.index}`}
        style={{
          width: 92,
          height: 74,
          borderRadius: 6,
          padding: 6,
          border: c.state === "idle" ? "3px dashed var(--mantine-color-orange-9)" : "1px solid var(--mantine-color-default-border)",
          background: c.state === "idle" ? `${STRIPES}, ${s.bg}` : s.bg,
          color: c.state === "busy" || c.state === "idle" ? "white" : undefined,
          display: "flex",
          flexDirection: "column",
          justifyContent: "space-between",
        }}
      >
        <Group justify="space-between" gap={2} wrap="nowrap">
          <Text size="xs" fw={700}>
            GPU {c.index}
          </Text>
          <Text size="xs" fw={700}>
            {s.text}
          </Text>
        </Group>
        <Text size="xs">{c.util === undefined ? "—" : `${Math.round(c.util)}% used`}</Text>
        {/* the shares of the device, as a stacked strip: 0.25 + 0.5 shows as two parts */}
        <Group gap={1} wrap="nowrap" h={8} style={{ background: "rgba(127,127,127,.25)", borderRadius: 2 }}>
          {c.shares.map((sh, i) => (
            <Box
              key={sh.pod}
              h={8}
              w={`${(sh.milli / 1000) * 100}%`}
              bg={`${SHARE_COLORS[i % SHARE_COLORS.length]}.4`}
              style={{ borderRadius: 2, outline: "1px solid rgba(255,255,255,.7)" }}
            />
          ))}
        </Group>
      </UnstyledButton>
    </Tooltip>
  );
}

export default function Fleet() {
  const nodes = useWatch(K.nodes);
  const pods = useWatch(K.pods);
  const [open, setOpen] = useState<Cell | null>(null);
  const cells = useMemo(() => cellsOf(nodes.items, pods.items), [nodes.items, pods.items]);
  const all = [...cells.values()].flat();
  const count = (s: CellState) => all.filter((c) => c.state === s).length;
  if (nodes.error) return <Page title="Fleet"><ReadError error={nodes.error} what="the fleet's nodes (it needs the right to list nodes)" /></Page>;
  return (
    <Page title="Fleet" intro="Each cell is one GPU: its colour says whether it is free, busy, or allocated while idle; the strip at its foot shows who holds which share. Utilisation is the agent's last sample.">
      <Group gap="lg" aria-label="Legend" role="list">
        {(Object.keys(STYLE) as CellState[]).map((s) => (
          <Group key={s} gap={6} role="listitem">
            <Swatch state={s} />
            <Text size="sm">
              {STYLE[s].label}: {count(s)}
            </Text>
          </Group>
        ))}
      </Group>
      {nodes.loading ? (
        <Loading what="nodes" />
      ) : nodes.items.length === 0 ? (
        <Empty>No node has joined yet: start an agent (tessera agent) or tessera up.</Empty>
      ) : (
        <Stack>
          {pods.error && <ReadError error={pods.error} what="the pods on the nodes (allocations)" />}
          {nodes.items
            .slice()
            .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
            .map((n) => {
              const cs = cells.get(n.metadata.name) ?? [];
              const ready = nodeReady(n);
              const alloc = cs.reduce((s, c) => s + c.allocated, 0);
              const utilCells = cs.filter((c) => c.util !== undefined);
              const util = utilCells.length ? utilCells.reduce((s, c) => s + (c.util ?? 0), 0) / utilCells.length / 100 : undefined;
              return (
                <Card key={n.metadata.name} withBorder component="section" aria-label={`node ${n.metadata.name}`}>
                  <Group justify="space-between" mb="xs">
                    <Group gap="xs">
                      <Text fw={700}>{n.metadata.name}</Text>
                      <Badge color={ready ? "green" : "red"} variant="light">
                        {ready ? "Ready" : n.spec?.unschedulable ? "SchedulingDisabled" : "NotReady"}
                      </Badge>
                      {n.metadata.annotations?.["tessera.dev/gpus-simulated"] === "true" && <Badge variant="outline" color="gray">simulated GPUs</Badge>}
                    </Group>
                    <Text size="sm" c="dimmed">
                      {cs[0]?.model ?? ""} · {gpus(alloc)} of {cs.length} GPUs allocated{util !== undefined ? ` · ${pct(util)} utilised` : ""}
                    </Text>
                  </Group>
                  {cs.length === 0 ? (
                    <Text size="sm" c="dimmed">No GPUs on this node.</Text>
                  ) : (
                    <SimpleGrid cols={{ base: 4, md: 8 }} spacing={8} w="fit-content">
                      {cs.map((c) => (
                        <GpuCell key={c.index} c={c} onOpen={() => setOpen(c)} />
                      ))}
                    </SimpleGrid>
                  )}
                </Card>
              );
            })}
        </Stack>
      )}
      <Modal opened={open !== null} onClose={() => setOpen(null)} title={open ? `${open.node} GPU ${open.index}` : ""} size="lg">
        {open && (
          <Stack>
            <Text size="sm">{describeCell(open)}</Text>
            <Text size="sm">
              Model {open.model}; memory in use{" "}
              {open.memUsed === undefined ? "unknown" : `${(open.memUsed / 2 ** 30).toFixed(1)} GiB`}
              {open.memTotal ? ` of ${(open.memTotal / 2 ** 30).toFixed(0)} GiB` : ""}.
            </Text>
            {open.shares.length === 0 ? (
              <Text size="sm" c="dimmed">Nothing holds this device.</Text>
            ) : (
              <DataTable
                label="Pods holding this GPU"
                head={["Namespace", "Workload", "Pod", "Share"]}
                rows={open.shares.map((s) => [s.namespace, s.workload, s.pod, gpus(s.milli)])}
              />
            )}
          </Stack>
        )}
      </Modal>
    </Page>
  );
}
