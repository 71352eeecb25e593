import { Anchor, Badge, Button, Group, Stack, Table, Text, TextInput, Title, Tooltip, UnstyledButton } from "@mantine/core";
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams } from "react-router-dom";
import type { KubeObject } from "../../api/client";
import { useSnapshot, useWatch } from "../../api/hooks";
import { K } from "../../api/kinds";
import { useSession } from "../../auth/session";
import { Empty, ErrorNote, Loading, StateBadge } from "../../ui/common";
import { age, gpus, money } from "../../ui/format";
import { flavorPrices, usageByWorkload, type Summary } from "./workload";
import { type Col, spent, summaryOf, tableOrder } from "./workloadTable";

const COLS: { key: Col; label: string; width: string }[] = [
  { key: "name", label: "Name", width: "22%" },
  { key: "kind", label: "Kind", width: "9%" },
  { key: "state", label: "State", width: "25%" },
  { key: "queue", label: "Queue (position)", width: "11%" },
  { key: "gpus", label: "GPUs", width: "6%" },
  { key: "where", label: "Where", width: "11%" },
  { key: "age", label: "Age", width: "6%" },
  { key: "cost", label: "Cost so far", width: "10%" },
];
const ROW = 44;
const SCROLLER_OFFSET = 210; // the page above the table

// Rows and cells are plain elements with the Table's classes and data attributes
// (what Table.Tr and Table.Td render for a striped, hover-highlighted table with
// row borders): each Mantine component costs more than its element, and a
// screenful of rows is some 250 cells.
const TR = `${Table.classes.tr} mantine-Table-tr`;
const TD = `${Table.classes.td} mantine-Table-td`;
const CLIP = { overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" } as const;

// The state, with the core's message on hover. The tooltip mounts only while the
// pointer is over the cell: one per row on screen costs more than the rest of the row.
function StateCell({ r }: { r: Summary }) {
  const [hover, setHover] = useState(false);
  const badges = (
    <div style={{ display: "flex", alignItems: "center", gap: 6 }}>
      <StateBadge state={r.state} />
      {r.state !== "Admitted" && r.reason && (
        <Badge variant="outline" color="gray" size="sm" tt="none">
          {r.reason}
        </Badge>
      )}
    </div>
  );
  return (
    <td
      className={TD}
      style={{ overflow: "hidden", whiteSpace: "nowrap" }}
      onPointerEnter={r.message ? () => setHover(true) : undefined}
      onPointerLeave={r.message ? () => setHover(false) : undefined}
    >
      {hover && r.message ? (
        <Tooltip label={r.message} multiline w={420} opened>
          {badges}
        </Tooltip>
      ) : (
        badges
      )}
    </td>
  );
}

// One row. It renders again only when its object, its spending or the clock
// changes: under a storm of updates only the rows that changed are drawn again.
const WorkloadRow = memo(function WorkloadRow({
  w,
  ns,
  index,
  gpuHours,
  cost,
  now,
}: {
  w: KubeObject;
  ns: string;
  index: number;
  gpuHours: number | undefined;
  cost: number | undefined;
  now: number;
}) {
  const r = summaryOf(w);
  return (
    <tr className={TR} data-with-row-border data-striped="odd" data-hover style={{ height: ROW }} data-row={r.name} aria-rowindex={index + 2}>
      <td className={TD} style={CLIP}>
        <Anchor component={Link} to={`/ns/${ns}/${r.owner.plural}/${r.owner.name}`} size="sm">
          {r.owner.name}
        </Anchor>
        {r.owner.name !== r.name && (
          <Text span size="xs" c="dimmed">
            {" "}
            ({r.name})
          </Text>
        )}
      </td>
      <td className={TD}>{r.owner.kind}</td>
      <StateCell r={r} />
      <td className={TD}>
        {r.queue}
        {r.position !== undefined ? ` (#${r.position})` : ""}
      </td>
      <td className={TD}>{gpus(r.milliGpu)}</td>
      <td className={TD} style={CLIP} title={r.where || undefined}>
        {r.where ? `${r.where}${r.flavor ? ` (${r.flavor})` : ""}` : "—"}
      </td>
      <td className={TD}>{age(r.created, now)}</td>
      <td className={TD}>{cost !== undefined ? money(cost) : gpuHours !== undefined ? `${gpuHours.toFixed(2)} GPU-h` : "—"}</td>
    </tr>
  );
});

export default function Workloads() {
  const { ns = "" } = useParams();
  const { client } = useSession();
  const live = useWatch(K.workloads, ns);
  const usage = useSnapshot((s) => usageByWorkload(client, ns, s), [client, ns], 15000);
  const prices = useSnapshot((s) => flavorPrices(client, s), [client], 60000);
  const [filter, setFilter] = useState("");
  const [sort, setSort] = useState<{ col: Col; desc: boolean }>({ col: "age", desc: false });
  // The clock the ages are read against.
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 15000);
    return () => clearInterval(timer);
  }, []);

  const rows = useMemo(
    () => tableOrder(live.items as KubeObject[], filter, sort, usage.data, prices.data),
    [live.items, usage.data, prices.data, filter, sort],
  );

  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW,
    overscan: 12,
    // The scroller's height (below) before it is measured: the first render has its rows.
    initialRect: { width: 0, height: Math.max(0, window.innerHeight - SCROLLER_OFFSET) },
  });

  if (live.error) {
    const forbidden = (live.error as { code?: number }).code === 403;
    return <ErrorNote error={live.error} title={forbidden ? `Not allowed: your role cannot see the workloads of ${ns}` : `Cannot list the workloads of ${ns}`} />;
  }
  const items = virtual.getVirtualItems();
  const top = items[0]?.start ?? 0;
  const bottom = virtual.getTotalSize() - (items.at(-1)?.end ?? 0);

  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2}>Workloads in {ns}</Title>
        <Button component={Link} to={`/ns/${ns}/launch`}>
          Launch
        </Button>
      </Group>
      <Group>
        <TextInput
          aria-label="Filter by name or state"
          placeholder="Filter by name or state"
          value={filter}
          onChange={(e) => setFilter(e.currentTarget.value)}
          w={320}
        />
        <Text size="sm" c="dimmed" data-testid="workload-count" aria-live="polite">
          {live.loading ? "" : `${rows.length} of ${live.items.length} workloads`}
        </Text>
        {prices.data === null && (
          <Text size="xs" c="dimmed">
            Costs need the flavors' prices, which your role cannot read: GPU-hours are shown.
          </Text>
        )}
      </Group>
      {live.loading ? (
        <Loading what="workloads" />
      ) : live.items.length === 0 ? (
        <Empty>
          No workloads in {ns} yet. <Anchor component={Link} to={`/ns/${ns}/launch`}>Launch one</Anchor>.
        </Empty>
      ) : (
        <div ref={scroller} style={{ height: `calc(100vh - ${SCROLLER_OFFSET}px)`, overflow: "auto" }} data-testid="workloads-scroller">
          <Table striped highlightOnHover stickyHeader layout="fixed" aria-label={`Workloads in ${ns}`} aria-rowcount={rows.length + 1}>
            <Table.Thead>
              <Table.Tr>
                {COLS.map((c) => (
                  <Table.Th
                    key={c.key}
                    w={c.width}
                    aria-sort={sort.col === c.key ? (sort.desc ? "descending" : "ascending") : "none"}
                  >
                    <UnstyledButton
                      onClick={() => setSort((s) => ({ col: c.key, desc: s.col === c.key ? !s.desc : false }))}
                      fw={600}
                      fz="sm"
                    >
                      {c.label}
                      {sort.col === c.key ? (sort.desc ? " ↓" : " ↑") : ""}
                    </UnstyledButton>
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {top > 0 && <tr style={{ height: top }} aria-hidden />}
              {items.map((v) => {
                const w = rows[v.index];
                const spend = spent(w.metadata.name, usage.data, prices.data);
                return (
                  <WorkloadRow key={w.metadata.name} w={w} ns={ns} index={v.index} gpuHours={spend.gpuHours} cost={spend.cost} now={now} />
                );
              })}
              {bottom > 0 && <tr style={{ height: bottom }} aria-hidden />}
            </Table.Tbody>
          </Table>
        </div>
      )}
    </Stack>
  );
}
