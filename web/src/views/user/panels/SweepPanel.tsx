// A Sweep: the objective of each trial against its number with the best so far,
// the trials with their parameters, and the counts.
import { Badge, Group, ScrollArea, Stack, Table, Text, Tooltip } from "@mantine/core";
import { useMemo } from "react";
import { Link } from "react-router-dom";
import type { KubeObject } from "../../../api/client";
import { K } from "../../../api/kinds";
import { Empty, ErrorNote, StateBadge } from "../../../ui/common";
import { Chart } from "./Chart";
import type { PanelProps } from "./index";
import { Facts, Section, useListed } from "./parts";
import { duration, goalOf, objectiveSeries, parameterNames, trialRows } from "./shape";

export default function SweepPanel({ object: sweep, namespace }: PanelProps) {
  const st = sweep.status ?? {};
  const spec = sweep.spec ?? {};
  const goal = goalOf(sweep);
  const metric: string = spec.objective?.objectiveMetricName ?? "objective";
  const rows = useMemo(() => trialRows(sweep), [sweep]);
  const params = useMemo(() => parameterNames(sweep, rows), [sweep, rows]);
  const data = useMemo(() => objectiveSeries(rows, goal), [rows, goal]);
  const best: string | undefined = st.currentOptimalTrial?.bestTrialName;
  const max = spec.maxTrialCount ?? spec.maxTrials;
  return (
    <Stack gap="md" data-testid="panel-sweeps">
      <Section title="Trials so far">
        <Facts
          cols={6}
          facts={[
            { label: "Trials", value: max ? `${st.trials ?? 0} of ${max}` : String(st.trials ?? 0) },
            { label: "Running", value: String(st.trialsRunning ?? 0) },
            { label: "Succeeded", value: String(st.trialsSucceeded ?? 0) },
            { label: "Failed", value: `${st.trialsFailed ?? 0}${spec.maxFailedTrialCount !== undefined ? ` (of ${spec.maxFailedTrialCount} allowed)` : ""}` },
            { label: "Early stopped", value: String(st.trialsEarlyStopped ?? 0) },
            { label: "At once", value: String(spec.parallelTrialCount ?? spec.parallelTrials ?? 3) },
          ]}
        />
        <Text size="sm">
          Goal: {goal} <Text span ff="monospace">{metric}</Text>
          {spec.objective?.goal !== undefined && <> until it reaches {String(spec.objective.goal)}</>}, by{" "}
          {spec.algorithm?.algorithmName ?? "random"} search.{" "}
          {best ? (
            <>
              Best so far: <strong>{best}</strong>, {metric} = {formatValue(st.currentOptimalTrial.objectiveValue)}.
            </>
          ) : (
            "No trial has ended yet: the best is chosen among ended trials."
          )}
        </Text>
      </Section>

      <Section title={`${metric} by trial`} testId="sweep-chart">
        {data[1].some((v) => v !== null) || data[2].some((v) => v !== null) ? (
          <Chart
            label={`${metric} of each trial against the trial's number, ended and running, and the best so far among ended trials (${goal})`}
            data={data}
            xLabel="trial"
            integerX
            yLabel={metric}
            series={[
              { label: `${metric} (ended)`, color: "blue", points: true },
              { label: `${metric} (running, latest)`, color: "gray", points: true },
              { label: "best so far", color: "orange", stepped: true },
            ]}
          />
        ) : (
          <Empty>No trial has reported {metric} yet.</Empty>
        )}
      </Section>

      <Section title="Trials" testId="sweep-trials">
        <TrialTable sweep={sweep} namespace={namespace} params={params} best={best} metric={metric} />
      </Section>
    </Stack>
  );
}

// A parameter as the trial got it, a long number cut to 6 significant digits
// (the exact value is the cell's title).
function paramText(v: string | undefined): string {
  if (v === undefined) return "—";
  const n = Number(v);
  return v.length > 10 && Number.isFinite(n) ? String(Number(n.toPrecision(6))) : v;
}

function formatValue(v: unknown): string {
  if (typeof v !== "number") return "—";
  return Math.abs(v) >= 1e-3 || v === 0 ? String(Number(v.toPrecision(6))) : v.toExponential(3);
}

function TrialTable(props: { sweep: KubeObject; namespace: string; params: string[]; best?: string; metric: string }) {
  const { sweep, namespace, params, best, metric } = props;
  const rows = trialRows(sweep);
  // The trials' Jobs, for how long each ran.
  const jobs = useListed(K.jobs, namespace, `tessera.dev/sweep=${sweep.metadata.name}`, 5000);
  const jobOf = new Map((jobs.data ?? []).map((j) => [j.metadata.name, j]));
  if (rows.length === 0) return <Empty>No trial yet.</Empty>;
  return (
    <Stack gap="xs">
      {jobs.error && <ErrorNote error={jobs.error} title="The trials' Jobs cannot be read" />}
      <ScrollArea.Autosize mah={480} type="auto">
        <Table striped highlightOnHover stickyHeader aria-label="Trials">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Trial</Table.Th>
              {params.map((p) => (
                <Table.Th scope="col" key={p}>
                  {p}
                </Table.Th>
              ))}
              <Table.Th scope="col">State</Table.Th>
              <Table.Th scope="col">{metric}</Table.Th>
              <Table.Th scope="col">Duration</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((r) => {
              const job = jobOf.get(r.name);
              const isBest = r.name === best;
              return (
                <Table.Tr
                  key={r.name}
                  data-testid="trial-row"
                  data-best={isBest || undefined}
                  aria-label={isBest ? `${r.name}, the best trial` : undefined}
                  bg={isBest ? "var(--mantine-color-yellow-light)" : undefined}
                >
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      <Link to={`/ns/${namespace}/jobs/${r.name}`}>{r.name}</Link>
                      {isBest && (
                        <Badge size="xs" color="yellow" variant="filled">
                          best
                        </Badge>
                      )}
                    </Group>
                  </Table.Td>
                  {params.map((p) => (
                    <Table.Td key={p} ff="monospace" title={r.params[p]}>
                      {paramText(r.params[p])}
                    </Table.Td>
                  ))}
                  <Table.Td>
                    {r.message || r.reason ? (
                      <Tooltip label={r.message || r.reason} withArrow multiline maw={360}>
                        <span tabIndex={0}>
                          <StateBadge state={r.state} />
                        </span>
                      </Tooltip>
                    ) : (
                      <StateBadge state={r.state} />
                    )}
                  </Table.Td>
                  <Table.Td ff="monospace">{formatValue(r.objective)}</Table.Td>
                  <Table.Td>{trialDuration(r.state, r.createdAt, job)}</Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </ScrollArea.Autosize>
    </Stack>
  );
}

// From its Job's start to its end (a failed Job's end is its Failed condition's
// time); a trial whose Job is gone (stopped early, deleted) has no duration.
function trialDuration(state: string, createdAt: string | undefined, job: KubeObject | undefined): string {
  if (!job) return state === "Running" ? duration(createdAt) || "—" : "—";
  const failed = ((job.status?.conditions ?? []) as { type: string; status: string; lastTransitionTime?: string }[]).find(
    (c) => c.type === "Failed" && c.status === "True",
  );
  return duration(job.status?.startTime ?? createdAt, job.status?.completionTime ?? failed?.lastTransitionTime) || "—";
}
