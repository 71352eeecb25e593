import { Alert, Button, Card, Group, MultiSelect, SegmentedControl, SimpleGrid, Stack, Table, Text, TextInput, Textarea, Title } from "@mantine/core";
import { useMemo, useState } from "react";
import { useSearchParams } from "react-router-dom";
import { ApiError, describeError, type KubeObject } from "../../api/client";
import { useSnapshot } from "../../api/hooks";
import { K } from "../../api/kinds";
import { useSession } from "../../auth/session";
import { Empty, Loading } from "../../ui/common";
import { DataTable, Page, ReadError, TimeChart } from "./parts";
import {
  alignSeries,
  buildReview,
  compareRows,
  currentGpuQuota,
  delta,
  duration,
  FormError,
  formFieldOf,
  teamWaits,
  type Scenario,
  type WhatIfStatus,
} from "./whatif";

// What if: the platform's own recorded period replayed by the scheduler core
// (a SimulationReview: `tessera sim` on the server's history) on the cluster
// and policy in force, and on a changed cluster or policy, with the plots side
// by side. Cluster-admin only: it reads every team's history.

const PERIODS = [
  { label: "Last 24 h", value: "24h" },
  { label: "7 d", value: "7d" },
  { label: "30 d", value: "30d" },
  { label: "Custom", value: "custom" },
];
const COLORS = ["#228be6", "#e8590c", "#2f9e44", "#ae3ec9", "#f59f00"];
const OBSERVED_COLOR = "#868e96";
const toRfc3339 = (local: string) => (local ? new Date(local).toISOString().replace(/\.\d+Z$/, "Z") : "");

function gpuQuotaRows(clusterQueues: KubeObject[]) {
  const rows: { cq: string; flavor: string; nominal: number }[] = [];
  for (const cq of clusterQueues)
    for (const g of cq.spec?.resourceGroups ?? [])
      for (const f of g.flavors ?? []) {
        const nominal = currentGpuQuota(cq, f.name);
        if (nominal !== undefined) rows.push({ cq: cq.metadata.name, flavor: f.name, nominal });
      }
  return rows;
}

export default function WhatIf() {
  const { client } = useSession();
  const [params, setParams] = useSearchParams();
  const [period, setPeriod] = useState(params.get("since") && !PERIODS.some((p) => p.value === params.get("since")) ? "custom" : (params.get("since") ?? "7d"));
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [scenario, setScenario] = useState<Scenario>(() => {
    const quotas: Scenario["quotas"] = {};
    for (const q of params.getAll("quota")) {
      const m = /^([^.]+)\.([^=]+)=(.+)$/.exec(q);
      if (m) (quotas[m[1]] ??= {})[m[2]] = m[3];
    }
    return {
      name: params.get("name") ?? "changed",
      addNodes: params.get("add") ?? "",
      removeNodes: params.getAll("remove"),
      cluster: params.get("cluster") ?? "",
      quotas,
      policyYaml: "",
    };
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [running, setRunning] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const [answer, setAnswer] = useState<WhatIfStatus | null>(null);

  const current = useSnapshot(
    async (signal) => {
      const [nodes, cqs] = await Promise.all([client.list(K.nodes, undefined, undefined, signal), client.list(K.clusterQueues, undefined, undefined, signal)]);
      return { nodes: nodes.items, clusterQueues: cqs.items };
    },
    [],
    0,
  );
  const quotaRows = useMemo(() => gpuQuotaRows(current.data?.clusterQueues ?? []), [current.data]);
  const set = (patch: Partial<Scenario>) => setScenario((s) => ({ ...s, ...patch }));

  async function run() {
    if (!current.data) return;
    setErrors({});
    setFailure(null);
    let review: KubeObject;
    try {
      const since = period === "custom" ? toRfc3339(from) : period;
      if (!since) throw new FormError("since", "Choose when the period begins");
      review = buildReview({ since, until: period === "custom" && to ? toRfc3339(to) : undefined, scenario }, current.data.clusterQueues);
    } catch (e) {
      if (e instanceof FormError) return setErrors({ [e.field]: e.message });
      throw e;
    }
    const next = new URLSearchParams();
    next.set("since", period === "custom" ? toRfc3339(from) : period);
    if (scenario.name !== "changed") next.set("name", scenario.name);
    if (scenario.addNodes) next.set("add", scenario.addNodes);
    if (scenario.cluster) next.set("cluster", scenario.cluster);
    for (const n of scenario.removeNodes) next.append("remove", n);
    for (const [cq, flavors] of Object.entries(scenario.quotas)) for (const [f, v] of Object.entries(flavors)) next.append("quota", `${cq}.${f}=${v}`);
    setParams(next, { replace: true });
    setRunning(true);
    try {
      const r = await client.create(K.simulationReviews, undefined, review);
      setAnswer(r.status as WhatIfStatus);
    } catch (e) {
      setAnswer(null);
      if (e instanceof ApiError && e.code === 422 && e.causes.length > 0) {
        const byField: Record<string, string> = {};
        for (const c of e.causes) {
          const f = formFieldOf(c.field ?? "");
          byField[f] = byField[f] ? `${byField[f]}; ${c.message}` : `${c.field}: ${c.message}`;
        }
        setErrors(byField);
      } else {
        setFailure(e);
      }
    } finally {
      setRunning(false);
    }
  }

  if (current.loading) return <Loading what="the cluster and its queues" />;
  if (current.error) return <ReadError error={current.error} what="the nodes and ClusterQueues" />;
  const nodes = current.data?.nodes ?? [];
  return (
    <Page
      title="What if"
      intro="Replays a recorded period of this platform (its admissions, from the usage records) with the scheduler that runs it, on the cluster and policy in force now and on a changed one, and compares them. Nothing is changed on the platform."
    >
      <Card withBorder component="form" aria-label="Simulation" onSubmit={(e) => (e.preventDefault(), void run())}>
        <Stack>
          <Group align="flex-end" wrap="wrap">
            <SegmentedControl aria-label="Period" value={period} onChange={setPeriod} data={PERIODS} />
            {period === "custom" && (
              <>
                <TextInput type="datetime-local" label="From" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
                <TextInput type="datetime-local" label="To" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
              </>
            )}
          </Group>
          {errors.since && (
            <Text c="red" size="sm" role="alert">
              {errors.since}
            </Text>
          )}
          <Title order={4}>The change</Title>
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <TextInput
              label="Scenario name"
              description="A DNS label, shown in the tables and plots"
              value={scenario.name}
              onChange={(e) => set({ name: e.currentTarget.value })}
              error={errors[""]}
            />
            <TextInput
              label="Add nodes"
              description="NODESxGPUSxMODEL, groups joined by commas (the model is the nvidia.com/gpu.product label flavors select)"
              placeholder="2x8xH100-80GB"
              value={scenario.addNodes}
              onChange={(e) => set({ addNodes: e.currentTarget.value })}
              error={errors.addNodes}
            />
            <MultiSelect
              label="Remove nodes"
              description="Take these nodes out of the fleet"
              data={nodes.map((n) => n.metadata.name)}
              value={scenario.removeNodes}
              onChange={(v) => set({ removeNodes: v })}
              searchable
              error={errors.removeNodes}
            />
            <TextInput
              label="Replace the fleet"
              description="Leave empty to keep the current nodes"
              placeholder="4x8xH100-80GB,2x4xA100-80GB"
              value={scenario.cluster}
              onChange={(e) => set({ cluster: e.currentTarget.value })}
              error={errors.cluster}
            />
          </SimpleGrid>
          {quotaRows.length > 0 && (
            <Table.ScrollContainer minWidth={500}>
              <Table aria-label="GPU nominal quota per ClusterQueue and flavor" withTableBorder>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th scope="col">ClusterQueue</Table.Th>
                    <Table.Th scope="col">Flavor</Table.Th>
                    <Table.Th scope="col">GPU nominal quota now</Table.Th>
                    <Table.Th scope="col">In the scenario</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {quotaRows.map((q) => (
                    <Table.Tr key={`${q.cq}/${q.flavor}`}>
                      <Table.Td>{q.cq}</Table.Td>
                      <Table.Td>{q.flavor}</Table.Td>
                      <Table.Td>{q.nominal / 1000}</Table.Td>
                      <Table.Td>
                        <TextInput
                          size="xs"
                          aria-label={`GPU quota of ${q.cq} on ${q.flavor} in the scenario`}
                          value={scenario.quotas[q.cq]?.[q.flavor] ?? String(q.nominal / 1000)}
                          onChange={(e) => {
                            const v = e.currentTarget.value;
                            setScenario((s) => ({ ...s, quotas: { ...s.quotas, [q.cq]: { ...s.quotas[q.cq], [q.flavor]: v } } }));
                          }}
                          error={errors[`quota/${q.cq}/${q.flavor}`]}
                          w={100}
                        />
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
          <Textarea
            label="More policy (YAML)"
            description="ResourceFlavors, ClusterQueues, LocalQueues, PriorityClasses, Namespaces or ResourceQuotas: each replaces the current object of its kind and name, or is added"
            autosize
            minRows={3}
            maxRows={16}
            styles={{ input: { fontFamily: "monospace" } }}
            value={scenario.policyYaml}
            onChange={(e) => set({ policyYaml: e.currentTarget.value })}
            error={errors.policy}
          />
          <Group>
            <Button type="submit" loading={running}>
              Run the simulation
            </Button>
            <Text size="sm" c="dimmed">
              {nodes.length} {nodes.length === 1 ? "node" : "nodes"} and {current.data?.clusterQueues.length ?? 0} ClusterQueues now
            </Text>
          </Group>
        </Stack>
      </Card>
      {failure !== null && (
        <Alert color="red" title="The simulation did not run" role="alert">
          {describeError(failure)}
        </Alert>
      )}
      {answer && <Outcome st={answer} />}
    </Page>
  );
}

function Outcome({ st }: { st: WhatIfStatus }) {
  const origin = Date.parse(st.origin);
  const rows = compareRows(st);
  const base = rows[0];
  const allocation = useMemo(() => {
    const series = [...st.results.map((r) => ({ t: r.series.t, values: r.series.allocatedGpuMilli.map((v) => v / 1000) })), { t: st.observed.series.t, values: st.observed.series.allocatedGpuMilli.map((v) => v / 1000) }];
    const a = alignSeries(origin, series);
    return {
      t: a.t,
      series: [...st.results.map((r, i) => ({ label: r.name, values: a.values[i] as number[], color: COLORS[i % COLORS.length] })), { label: "observed", values: a.values[st.results.length] as number[], color: OBSERVED_COLOR }],
    };
  }, [st, origin]);
  const pending = useMemo(() => {
    const a = alignSeries(
      origin,
      st.results.map((r) => ({ t: r.series.t, values: r.series.pending ?? [] })),
    );
    return { t: a.t, series: st.results.map((r, i) => ({ label: r.name, values: a.values[i] as number[], color: COLORS[i % COLORS.length] })) };
  }, [st, origin]);
  const waits = teamWaits(st);
  const warnings = [...st.warnings, ...st.results.flatMap((r) => r.warnings.map((w) => `${r.name}: ${w}`))];
  return (
    <Stack data-testid="whatif-outcome">
      <Text size="sm" c="dimmed">
        {st.jobs} jobs submitted from {st.since} to {st.until}, replayed from their first submission ({st.origin}).
      </Text>
      {warnings.length > 0 && (
        <Alert color="yellow" title="Left out or approximated">
          {warnings.map((w) => (
            <div key={w}>{w}</div>
          ))}
        </Alert>
      )}
      {st.jobs === 0 ? (
        <Empty>No job held an admission in this period: choose a longer one.</Empty>
      ) : (
        <>
          <DataTable
            label="Simulated runs compared"
            head={["Run", "GPUs", "Jobs", "Finished", "Mean wait", "p90 wait", "Mean completion", "Allocation", "Preemptions"]}
            rows={rows.map((r, i) => [
              <b key="n">{r.name}</b>,
              r.gpus,
              r.jobs,
              r.finished,
              i === 0 || r.name === "observed" ? duration(r.meanWait) : `${duration(r.meanWait)} (${delta(r.meanWait, base.meanWait, duration)})`,
              duration(r.p90Wait),
              i === 0 || r.name === "observed" ? duration(r.meanJct) : `${duration(r.meanJct)} (${delta(r.meanJct, base.meanJct, duration)})`,
              r.allocation === undefined ? "—" : `${r.allocation.toFixed(1)}%`,
              r.preemptions ?? "—",
            ])}
          />
          <Text size="xs" c="dimmed">
            current: the recorded jobs on the cluster and policy in force now; observed: what really happened to them. Waits are from submission to first start, completion from submission to end.
          </Text>
          <SimpleGrid cols={{ base: 1, lg: 2 }}>
            <Card withBorder>
              <Text fw={500} size="sm">
                GPUs allocated
              </Text>
              <TimeChart label="GPUs allocated over the period, per run and as observed" t={allocation.t} series={allocation.series} unit="GPUs" step />
            </Card>
            <Card withBorder>
              <Text fw={500} size="sm">
                Jobs waiting
              </Text>
              <TimeChart label="Jobs waiting over the period, per run" t={pending.t} series={pending.series} unit="jobs" step />
            </Card>
          </SimpleGrid>
          <DataTable
            label="Mean wait per team"
            head={["Team", ...st.results.map((r) => r.name)]}
            rows={waits.map((w) => [w.team, ...w.waits.map((x) => (x === undefined ? "— (none finished)" : duration(x)))])}
          />
        </>
      )}
    </Stack>
  );
}
