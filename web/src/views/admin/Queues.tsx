import { Box, Card, Group, Progress, SimpleGrid, Stack, Text, Title, Tooltip } from "@mantine/core";
import { useSnapshot } from "../../api/hooks";
import { K } from "../../api/kinds";
import type { KubeObject } from "../../api/client";
import { useSession } from "../../auth/session";
import { Empty, Loading } from "../../ui/common";
import { age, gpus } from "../../ui/format";
import { Page, ReadError } from "./parts";
import { quotaOf, type FlavorQuota } from "./quota";

// ClusterQueues grouped by cohort: per flavor a bar of GPUs (used within nominal,
// borrowed above it) against nominal and nominal + borrowing limit, the lending
// limit, and each queue's pending work with its oldest wait.

const conditionTrue = (w: KubeObject, type: string) =>
  (w.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === type && c.status === "True");

// Waiting for quota: not admitted, not finished, not deactivated.
export const isPending = (w: KubeObject) =>
  !w.status?.admission && !conditionTrue(w, "Admitted") && !conditionTrue(w, "Finished") && w.spec?.active !== false;

function Bar({ q, cohortPool, inCohort }: { q: FlavorQuota; cohortPool: number; inCohort: boolean }) {
  // Outside a cohort a queue is capped at nominal: nothing to borrow or lend.
  const ceiling = q.nominal + (inCohort ? (q.borrowingLimit ?? cohortPool) : 0);
  const borrow = !inCohort ? "0 (no cohort)" : q.borrowingLimit === undefined ? "∞" : gpus(q.borrowingLimit);
  const lend = !inCohort ? "0 (no cohort)" : q.lendingLimit === undefined ? gpus(q.nominal) : gpus(q.lendingLimit);
  const max = Math.max(ceiling, q.used, 1);
  const within = Math.min(q.used - q.borrowed, q.nominal);
  const w = (x: number) => (x / max) * 100;
  const label = `flavor ${q.flavor}: ${gpus(q.used)} GPUs in use (${gpus(q.borrowed)} borrowed) of ${gpus(q.nominal)} nominal; may borrow ${borrow}, may lend ${lend}`;
  return (
    <Stack gap={2}>
      <Group justify="space-between">
        <Text size="sm" fw={600}>
          {q.flavor}
        </Text>
        <Text size="xs" c="dimmed">
          {gpus(q.used)} used · {gpus(q.borrowed)} borrowed · nominal {gpus(q.nominal)} · borrow ≤ {borrow} · lend ≤ {lend}
        </Text>
      </Group>
      <Box pos="relative" role="img" aria-label={label}>
        <Progress.Root size={18}>
          <Tooltip label={`${gpus(within)} used within nominal`}>
            <Progress.Section value={w(within)} color="blue" />
          </Tooltip>
          <Tooltip label={`${gpus(q.borrowed)} borrowed from the cohort`}>
            <Progress.Section value={w(q.borrowed)} color="orange" />
          </Tooltip>
        </Progress.Root>
        {/* nominal and the part never lent, as marks on the bar */}
        <Box pos="absolute" top={-3} h={24} left={`${w(q.nominal)}%`} style={{ borderLeft: "2px solid var(--mantine-color-text)" }} />
        {q.reserved > 0 && (
          <Box pos="absolute" top={0} h={18} left={0} w={`${w(q.reserved)}%`} style={{ borderBottom: "3px dotted var(--mantine-color-grape-6)" }} />
        )}
      </Box>
    </Stack>
  );
}

export default function Queues() {
  const { client } = useSession();
  const snap = useSnapshot(
    async (signal) => {
      const [cqs, lqs, wls] = await Promise.all([
        client.list(K.clusterQueues, undefined, undefined, signal),
        client.list(K.localQueues, undefined, undefined, signal),
        client.list(K.workloads, undefined, undefined, signal),
      ]);
      return { cqs: cqs.items, lqs: lqs.items, wls: wls.items };
    },
    [],
    5000,
  );
  if (snap.loading) return <Loading what="ClusterQueues" />;
  if (snap.error) return <Page title="Queues and cohorts"><ReadError error={snap.error} what="the ClusterQueues and their workloads" /></Page>;
  const { cqs, lqs, wls } = snap.data!;
  const cqOf = (w: KubeObject) =>
    lqs.find((l) => l.metadata.namespace === w.metadata.namespace && l.metadata.name === w.spec?.queueName)?.spec?.clusterQueue;
  const cohorts = new Map<string, KubeObject[]>();
  for (const q of [...cqs].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const c = q.spec?.cohort ?? "";
    cohorts.set(c, [...(cohorts.get(c) ?? []), q]);
  }
  const now = Date.now();
  return (
    <Page
      title="Queues and cohorts"
      intro="Blue: GPUs used within nominal quota; orange: borrowed from the cohort; the black mark is the nominal quota, the bar's end nominal + borrowing limit; a dotted line marks quota never lent (nominal − lending limit)."
    >
      {cqs.length === 0 && <Empty>No ClusterQueue exists: an admin creates them (examples/quickstart/04-clusterqueues.yaml).</Empty>}
      {[...cohorts.entries()].map(([cohort, queues]) => {
        // The cohort's lendable pool per flavor bounds a queue without a borrowing limit.
        const pool = new Map<string, number>();
        for (const q of queues) for (const f of quotaOf(q)) pool.set(f.flavor, (pool.get(f.flavor) ?? 0) + Math.min(f.lendingLimit ?? f.nominal, f.nominal));
        return (
          <Card key={cohort} withBorder component="section" aria-label={cohort ? `cohort ${cohort}` : "queues outside any cohort"}>
            <Title order={3} mb="sm">
              {cohort ? `Cohort ${cohort}` : "Outside any cohort"}
            </Title>
            <SimpleGrid cols={{ base: 1, md: 2, xl: 3 }}>
              {queues.map((q) => {
                const pending = wls.filter((w) => isPending(w) && cqOf(w) === q.metadata.name);
                const oldest = pending.map((w) => w.metadata.creationTimestamp ?? "").sort()[0];
                return (
                  <Card key={q.metadata.name} withBorder data-testid={`cq-${q.metadata.name}`}>
                    <Group justify="space-between" mb="xs">
                      <Text fw={700}>{q.metadata.name}</Text>
                      <Text size="sm" c={pending.length ? "orange" : "dimmed"}>
                        {q.status?.pendingWorkloads ?? pending.length} pending{oldest ? `, oldest waits ${age(oldest, now)}` : ""} · {q.status?.admittedWorkloads ?? 0} admitted
                      </Text>
                    </Group>
                    <Stack gap="sm">
                      {quotaOf(q).map((f) => (
                        <Bar key={f.flavor} q={f} inCohort={!!cohort} cohortPool={cohort ? (pool.get(f.flavor) ?? 0) - Math.min(f.lendingLimit ?? f.nominal, f.nominal) : 0} />
                      ))}
                      {quotaOf(q).length === 0 && <Text size="sm" c="dimmed">No GPU quota.</Text>}
                    </Stack>
                  </Card>
                );
              })}
            </SimpleGrid>
          </Card>
        );
      })}
    </Page>
  );
}
