import { Alert, Button, Card, Group, SegmentedControl, Stack, Text, TextInput } from "@mantine/core";
import { useMemo, useState } from "react";
import { useSnapshot } from "../../api/hooks";
import { K } from "../../api/kinds";
import { useSession } from "../../auth/session";
import { Empty, Loading } from "../../ui/common";
import { money, pct } from "../../ui/format";
import { DataTable, Page, ReadError, TimeChart } from "./parts";
import { buckets, gpuHours, pricesOf, summarize, toCsv, type GroupBy } from "./usage";

// GPU-hours allocated and used, and their cost, per team, flavor, user or queue
// over a period: the numbers of `tessera report usage --since ... --by ...`,
// from the UsageRecords and the flavors' prices, with a CSV download.

const H = 3600_000;
const RANGES: Record<string, number> = { "24h": 24 * H, "7d": 7 * 24 * H, "30d": 30 * 24 * H };
const localInput = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60000).toISOString().slice(0, 16);

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export default function Cost() {
  const { client } = useSession();
  const [range, setRange] = useState("24h");
  const [by, setBy] = useState<GroupBy>("team");
  const [from, setFrom] = useState(localInput(Date.now() - 7 * 24 * H));
  const [to, setTo] = useState(localInput(Date.now()));
  const snap = useSnapshot(
    async (signal) => {
      const [records, flavors] = await Promise.all([
        client.list(K.usageRecords, undefined, undefined, signal),
        client.list(K.resourceFlavors, undefined, undefined, signal),
      ]);
      return { records: records.items, prices: pricesOf(flavors.items), at: Date.now() };
    },
    [],
    60000,
  );
  const window = useMemo(() => {
    const now = snap.data?.at ?? Date.now();
    if (range !== "custom") return { since: now - RANGES[range], until: now, now };
    return { since: Date.parse(from), until: Date.parse(to), now };
  }, [range, from, to, snap.data]);
  const bad = !(window.until > window.since);
  const summary = useMemo(
    () => (snap.data && !bad ? summarize(snap.data.records, snap.data.prices, window.since, window.until, window.now, by) : null),
    [snap.data, window, by, bad],
  );
  const chart = useMemo(() => {
    if (!snap.data || bad) return null;
    const span = window.until - window.since;
    const step = span <= 2 * 24 * H ? H : span <= 14 * 24 * H ? 6 * H : 24 * H;
    const b = buckets(snap.data.records, window.since, window.until, window.now, step);
    return {
      t: b.t,
      series: [
        { label: "GPU-hours allocated", values: b.allocated, color: "#228be6" },
        { label: "GPU-hours used", values: b.used, color: "#12b886" },
      ],
      unit: step === H ? "GPU-hours per hour" : step === 6 * H ? "GPU-hours per 6 h" : "GPU-hours per day",
    };
  }, [snap.data, window, bad]);
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
  return (
    <Page title="Usage and cost" intro="GPU-hours held (allocated), GPU-hours kept busy (used, from the agents' samples) and cost at each flavor's price, as tessera report usage computes them.">
      <Group align="flex-end" wrap="wrap">
        <SegmentedControl
          aria-label="Period"
          value={range}
          onChange={setRange}
          data={[
            { label: "Last 24 h", value: "24h" },
            { label: "7 d", value: "7d" },
            { label: "30 d", value: "30d" },
            { label: "Custom", value: "custom" },
          ]}
        />
        {range === "custom" && (
          <>
            <TextInput type="datetime-local" label="From" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
            <TextInput type="datetime-local" label="To" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
          </>
        )}
        <SegmentedControl
          aria-label="Group by"
          value={by}
          onChange={(v) => setBy(v as GroupBy)}
          data={[
            { label: "Team", value: "team" },
            { label: "Flavor", value: "flavor" },
            { label: "User", value: "user" },
            { label: "Queue", value: "queue" },
          ]}
        />
        <Button
          variant="light"
          disabled={!summary || summary.rows.length === 0}
          onClick={() => summary && download(`tessera-usage-${by}-${iso(window.since)}-${iso(window.until)}.csv`, toCsv(by, summary.rows))}
        >
          Export CSV
        </Button>
      </Group>
      {bad && <Alert color="yellow" role="alert">The period must end after it starts.</Alert>}
      {snap.loading ? (
        <Loading what="usage records" />
      ) : snap.error ? (
        <ReadError error={snap.error} what="usage records and flavor prices" />
      ) : !summary ? null : summary.rows.length === 0 ? (
        <Empty>No GPU was held in this period.</Empty>
      ) : (
        <Stack>
          <Text size="sm" c="dimmed">
            {iso(window.since)} to {iso(window.until)}
          </Text>
          {chart && (
            <Card withBorder>
              <TimeChart label="GPU-hours allocated and used over the period" t={chart.t} series={chart.series} unit={chart.unit} />
            </Card>
          )}
          <DataTable
            label={`Usage and cost by ${by}`}
            head={[by[0].toUpperCase() + by.slice(1), "GPU-hours", "Used GPU-hours", "Used", "Cost", "Admissions"]}
            rows={[...summary.rows, summary.total].map((r) => [
              r.key === "TOTAL" ? <b key="k">Total</b> : r.key,
              gpuHours(r.gpuMilliSeconds).toFixed(2),
              gpuHours(r.usedMilliSeconds).toFixed(2),
              r.gpuMilliSeconds > 0 ? pct(r.usedMilliSeconds / r.gpuMilliSeconds) : "—",
              money(r.cost),
              r.admissions,
            ])}
          />
          {summary.unpriced.length > 0 && (
            <Alert color="yellow">
              No price for flavor(s) {summary.unpriced.join(", ")}: their GPU time costs 0 here. Annotate the ResourceFlavor with tessera.dev/price-per-gpu-hour: "2.10" (per GPU-hour).
            </Alert>
          )}
        </Stack>
      )}
    </Page>
  );
}
