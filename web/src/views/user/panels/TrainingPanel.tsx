// A TrainingJob: the gang's size (elastic or fixed), its restarts and growth,
// and each worker by rank.
import { Alert, Group, Stack, Table, Text } from "@mantine/core";
import type { KubeObject } from "../../../api/client";
import { useSnapshot } from "../../../api/hooks";
import { K } from "../../../api/kinds";
import { useSession } from "../../../auth/session";
import { Empty, ErrorNote, Loading, StateBadge } from "../../../ui/common";
import { age, gpus } from "../../../ui/format";
import type { PanelProps } from "./index";
import { Facts, Section, useListed, useNow } from "./parts";
import { condition, elasticSize, workerRows } from "./shape";

export default function TrainingPanel({ object: tj, namespace }: PanelProps) {
  const now = useNow();
  const size = elasticSize(tj);
  const spec = tj.spec ?? {};
  const st = tj.status ?? {};
  const workload: string = st.workload ?? `trainingjob-${tj.metadata.name}`;
  const restartPolicy = spec.restartPolicy ?? "OnFailure";
  return (
    <Stack gap="md" data-testid="panel-trainingjobs">
      <Section title="Gang">
        <Facts
          cols={5}
          facts={[
            {
              label: "Workers",
              value: size.current !== undefined ? `${size.current} of ${size.max}` : `none yet of ${size.max}`,
              hint: "the world size: how many workers the gang was admitted with",
            },
            { label: "Size", value: size.elastic ? `elastic, ${size.min} to ${size.max}` : `fixed, ${size.max}` },
            { label: "Processes per worker", value: String(spec.nprocPerNode ?? 1) },
            {
              label: "Restarts",
              value: restartPolicy === "Never" ? "none (restartPolicy Never)" : `${st.restarts ?? 0} of ${spec.backoffLimit ?? 3}`,
            },
            { label: "Last checkpoint", value: st.lastCheckpoint ? `${age(st.lastCheckpoint, now)} ago` : "none reported" },
          ]}
        />
        {size.elastic && <Growth name={tj.metadata.name} namespace={namespace} tj={tj} />}
      </Section>
      <Section title="Workers" testId="tj-workers">
        <Workers workload={workload} namespace={namespace} />
      </Section>
    </Stack>
  );
}

// The placeholder that claims room for more workers (trainingjob-NAME-grow).
function Growth({ name, namespace, tj }: { name: string; namespace: string; tj: KubeObject }) {
  const { client } = useSession();
  const grow = useSnapshot<KubeObject | null>(
    (signal) =>
      client.get(K.workloads, namespace, `trainingjob-${name}-grow`, signal).catch((e) => {
        if (e?.code === 404) return null;
        throw e;
      }),
    [client, namespace, name],
  );
  const size = elasticSize(tj);
  if (grow.loading) return null;
  if (grow.error) return <ErrorNote error={grow.error} title="Its growth cannot be read" />;
  if (!grow.data) {
    const below = size.current !== undefined && size.current < size.max;
    return (
      <Text size="sm" c="dimmed">
        {below
          ? tj.status?.lastCheckpoint
            ? `Growth: none asked for now; it grows toward ${size.max} workers when room appears.`
            : `Growth: it grows toward ${size.max} workers once it reports a checkpoint.`
          : "Growth: at its largest size."}
      </Text>
    );
  }
  const held = Boolean(grow.data.status?.admission) && condition(grow.data, "Evicted")?.status !== "True";
  const extra = grow.data.spec?.podSets?.[0]?.count ?? size.max - (size.current ?? 0);
  return (
    <Alert color={held ? "teal" : "blue"} variant="light" title="Growing">
      {held
        ? `Room for ${extra} more worker${extra === 1 ? "" : "s"} is held (Workload ${grow.data.metadata.name}): the gang restarts with them at its next checkpoint.`
        : `Waiting for room for ${extra} more worker${extra === 1 ? "" : "s"} (Workload ${grow.data.metadata.name}, at the lowest priority: it takes only room nothing waiting wants).`}
    </Alert>
  );
}

function Workers({ workload, namespace }: { workload: string; namespace: string }) {
  const pods = useListed(K.pods, namespace, `tessera.dev/workload=${workload}`);
  if (pods.loading) return <Loading what="the workers" />;
  if (pods.error) return <ErrorNote error={pods.error} />;
  const rows = workerRows(pods.data ?? []);
  if (rows.length === 0) return <Empty>No workers: the gang is not admitted yet.</Empty>;
  return (
    <Table.ScrollContainer minWidth={640}>
      <Table striped aria-label="Workers">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Rank</Table.Th>
            <Table.Th scope="col">Pod</Table.Th>
            <Table.Th scope="col">Node</Table.Th>
            <Table.Th scope="col">GPUs</Table.Th>
            <Table.Th scope="col">State</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((w) => (
            <Table.Tr key={w.pod} data-testid="worker-row">
              <Table.Td>{w.rank}</Table.Td>
              <Table.Td ff="monospace">{w.pod}</Table.Td>
              <Table.Td>{w.node ?? "—"}</Table.Td>
              <Table.Td>{w.gpuMilli ? gpus(w.gpuMilli) : "0"}</Table.Td>
              <Table.Td>
                <Group gap="xs" wrap="nowrap">
                  <StateBadge state={w.phase} />
                  {!w.ready && w.phase !== "Succeeded" && (
                    <Text size="xs" c="dimmed">
                      {w.why}
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
