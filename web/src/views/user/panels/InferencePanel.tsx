// An InferenceService: where to call it, its replicas, revisions and canary,
// the traffic the proxy saw over the last minute, and its autoscaling.
import { Alert, Badge, Group, Stack, Table, Text, Tooltip } from "@mantine/core";
import { Link } from "react-router-dom";
import { K } from "../../../api/kinds";
import { Empty, ErrorNote, Loading, StateBadge } from "../../../ui/common";
import type { PanelProps } from "./index";
import { absolute, CopyLine, Facts, Section, useListed } from "./parts";
import { condition, replicaRows } from "./shape";

interface Revision {
  name: string;
  replicas: number;
  readyReplicas: number;
  trafficPercent?: number;
}

export default function InferencePanel({ object: isvc, namespace }: PanelProps) {
  const name = isvc.metadata.name;
  const spec = isvc.spec ?? {};
  const st = isvc.status ?? {};
  const autoscaled = typeof spec.minReplicas === "number";
  const ready = condition(isvc, "Ready");
  return (
    <Stack gap="md" data-testid="panel-inferenceservices">
      <Section title="Endpoint">
        {st.url ? (
          <Stack gap="xs">
            <CopyLine value={absolute(st.url)} label="URL" />
            <Text size="sm" c="dimmed">
              Members of {namespace} reach it through the server's proxy. A browser link that logs you in:
            </Text>
            <CopyLine value={`tessera open svc/${name}:http -n ${namespace}`} label="CLI command" />
            <Text size="sm" c="dimmed">
              From a script, with your token:
            </Text>
            <CopyLine value={`curl -H "Authorization: Bearer $TESSERA_TOKEN" ${absolute(st.url)}`} label="curl command" />
          </Stack>
        ) : (
          <Empty>No URL yet: the controller has not made its Service.</Empty>
        )}
      </Section>

      <Section title="Replicas" testId="isvc-replicas">
        <Facts
          facts={[
            { label: "Desired", value: String(st.replicas ?? spec.replicas ?? "") },
            { label: "Ready", value: String(st.readyReplicas ?? 0) },
            ...(autoscaled
              ? [
                  { label: "Min", value: String(spec.minReplicas) },
                  { label: "Max", value: String(spec.maxReplicas ?? spec.minReplicas) },
                ]
              : []),
          ]}
        />
        {st.message && (
          <Alert color="yellow" variant="light" title="Why a replica waits">
            {st.message}
          </Alert>
        )}
        {st.replicaFailures?.count > 0 && (
          <Text size="sm" c="red">
            {st.replicaFailures.count} replica{st.replicaFailures.count === 1 ? "" : "s"} in a row ended before becoming
            ready; the last: {st.replicaFailures.lastMessage}
          </Text>
        )}
        <ReplicaTable name={name} namespace={namespace} />
      </Section>

      <Section title="Revisions">
        <RevisionTable
          revisions={(st.revisions ?? []) as Revision[]}
          current={st.revision}
          stable={st.stableRevision}
          previous={st.previousRevision}
        />
        {typeof spec.canaryTrafficPercent === "number" && spec.canaryTrafficPercent < 100 && (
          <Text size="sm">
            Canary: the current revision {st.revision} gets {spec.canaryTrafficPercent}% of the requests once it has a
            ready replica; the stable revision {st.stableRevision ?? "(none yet)"} keeps the rest. Drop
            canaryTrafficPercent to promote it; <Text span ff="monospace">tessera rollout undo isvc/{name}</Text> goes
            back.
          </Text>
        )}
      </Section>

      <Section title="Traffic over the last minute" testId="isvc-traffic">
        {st.requests ? (
          <Facts
            facts={[
              { label: "Requests", value: String(st.requests.count) },
              { label: "Errors", value: String(st.requests.errors), hint: "5xx answers, or no answer" },
              { label: "Per second", value: String(st.requests.perSecond) },
              { label: "p50 latency", value: `${st.requests.latencyP50Ms} ms` },
              { label: "p99 latency", value: `${st.requests.latencyP99Ms} ms` },
            ]}
            cols={5}
          />
        ) : (
          <Empty>No requests through the proxy in the last minute.</Empty>
        )}
        <Text size="xs" c="dimmed">
          What the server's proxy answered, brought up to date every 10 s; requests sent to a pod directly are not
          counted.
        </Text>
      </Section>

      {autoscaled && (
        <Section title="Autoscaling">
          <Facts
            facts={[
              { label: "Target in flight", value: `${spec.autoscaling?.targetConcurrency ?? 10} per replica` },
              { label: "Scale-down delay", value: spec.autoscaling?.scaleDownDelay ?? "30s" },
              { label: "State", value: ready?.reason ?? "" },
            ]}
            cols={3}
          />
          {spec.minReplicas === 0 && (st.replicas ?? 0) === 0 && (
            <Alert color="blue" variant="light" title="Scaled to zero">
              No replicas: the first request starts one, and is answered once it is ready.
            </Alert>
          )}
        </Section>
      )}
    </Stack>
  );
}

function ReplicaTable({ name, namespace }: { name: string; namespace: string }) {
  const selector = `tessera.dev/inferenceservice=${name}`;
  const workloads = useListed(K.workloads, namespace, selector);
  const pods = useListed(K.pods, namespace, selector);
  if (workloads.loading || pods.loading) return <Loading what="the replicas" />;
  if (workloads.error) return <ErrorNote error={workloads.error} />;
  if (pods.error) return <ErrorNote error={pods.error} />;
  const rows = replicaRows(workloads.data ?? [], pods.data ?? []);
  if (rows.length === 0) return <Empty>No replicas.</Empty>;
  return (
    <Table.ScrollContainer minWidth={720}>
      <Table striped aria-label="Replicas">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Workload</Table.Th>
            <Table.Th scope="col">Revision</Table.Th>
            <Table.Th scope="col">Pod</Table.Th>
            <Table.Th scope="col">Node</Table.Th>
            <Table.Th scope="col">State</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((r) => (
            <Table.Tr key={r.workload} data-testid="replica-row">
              <Table.Td>
                <Link to={`/ns/${namespace}/workloads/${r.workload}`}>{r.workload}</Link>
              </Table.Td>
              <Table.Td ff="monospace">{r.revision}</Table.Td>
              <Table.Td>{r.pod ?? "—"}</Table.Td>
              <Table.Td>{r.node ?? "—"}</Table.Td>
              <Table.Td>
                <Group gap="xs" wrap="nowrap">
                  <StateBadge state={r.state} />
                  {!r.ready && (
                    <Text size="xs" c="dimmed">
                      {r.why}
                    </Text>
                  )}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

function RevisionTable(props: { revisions: Revision[]; current?: string; stable?: string; previous?: string }) {
  const { revisions, current, stable, previous } = props;
  if (revisions.length === 0) return <Empty>No revision yet.</Empty>;
  const tags = (r: string) =>
    [r === current && "current", r === stable && "stable", r === previous && "previous"].filter(Boolean) as string[];
  return (
    <Table aria-label="Revisions">
      <Table.Thead>
        <Table.Tr>
          <Table.Th scope="col">Revision</Table.Th>
          <Table.Th scope="col">Replicas</Table.Th>
          <Table.Th scope="col">Ready</Table.Th>
          <Table.Th scope="col">Traffic</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {revisions.map((r) => (
          <Table.Tr key={r.name}>
            <Table.Td>
              <Group gap="xs">
                <Text ff="monospace" size="sm">
                  {r.name}
                </Text>
                {tags(r.name).map((t) => (
                  <Badge key={t} size="xs" variant="outline" color={t === "stable" ? "teal" : t === "current" ? "blue" : "gray"}>
                    {t}
                  </Badge>
                ))}
              </Group>
            </Table.Td>
            <Table.Td>{r.replicas}</Table.Td>
            <Table.Td>{r.readyReplicas}</Table.Td>
            <Table.Td>
              <Tooltip label="The share of requests the proxy sends to this revision" withArrow>
                <span>{r.trafficPercent ?? 0}%</span>
              </Tooltip>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
