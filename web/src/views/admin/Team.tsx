import { Badge, Card, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { useMemo } from "react";
import { useParams } from "react-router-dom";
import type { KubeObject } from "../../api/client";
import { useSnapshot } from "../../api/hooks";
import { K } from "../../api/kinds";
import { useSession } from "../../auth/session";
import { Empty, Loading } from "../../ui/common";
import { gpus, money } from "../../ui/format";
import { DataTable, Page, ReadError, TimeChart } from "./parts";
import { idleLendable, lentNow, quotaOf } from "./quota";
import { buckets } from "./usage";

// A team's namespace at a glance: its queue's quota per flavor, GPU-hours used
// per hour over the last day (its UsageRecords), who may do what (RoleBindings),
// and its budgets.

const DAY = 24 * 3600_000;
const HOUR = 3600_000;

function settle<T>(p: Promise<T>): Promise<{ ok: T } | { err: unknown }> {
  return p.then((ok) => ({ ok }), (err) => ({ err }));
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Card withBorder component="section" aria-label={title}>
      <Title order={3} mb="sm">
        {title}
      </Title>
      {children}
    </Card>
  );
}

function Quota({ ns }: { ns: string }) {
  const { client } = useSession();
  const snap = useSnapshot(
    async (signal) => {
      const lqs = (await client.list(K.localQueues, ns, undefined, signal)).items;
      const names = [...new Set(lqs.map((q) => q.spec?.clusterQueue as string).filter(Boolean))];
      // All of them, for what the cohort borrows from this team's queue (every signed-in user may read them).
      const all = await settle(client.list(K.clusterQueues, undefined, undefined, signal));
      const cqs =
        "ok" in all
          ? names.map((n) => {
              const cq = all.ok.items.find((q) => q.metadata.name === n);
              return cq ? { ok: cq } : { err: new Error(`ClusterQueue ${n}, which LocalQueues of ${ns} name, does not exist`) };
            })
          : names.map(() => all);
      return { lqs, names, cqs, lent: "ok" in all ? lentNow(all.ok.items) : new Map<string, Map<string, number>>() };
    },
    [ns],
    10000,
  );
  if (snap.loading) return <Loading what="the team's quota" />;
  if (snap.error) return <ReadError error={snap.error} what={`the queues of ${ns}`} />;
  const { lqs, names, cqs, lent } = snap.data!;
  if (lqs.length === 0) return <Empty>{ns} has no LocalQueue: its work cannot be queued. A platform admin creates one.</Empty>;
  return (
    <Stack>
      {names.map((name, i) => {
        const r = cqs[i];
        if ("err" in r)
          return (
            <Stack key={name} gap="xs">
              <ReadError error={r.err} what={`ClusterQueue ${name}'s quota (every signed-in user may read ClusterQueues unless the platform removed the system:basic-user grant)`} />
              <HeldNow ns={ns} />
            </Stack>
          );
        const cq = r.ok as KubeObject;
        const rows = quotaOf(cq);
        return (
          <Stack key={name} gap="xs">
            <Group gap="xs">
              <Text fw={600}>ClusterQueue {name}</Text>
              <Badge variant="light">cohort {cq.spec?.cohort ?? "none"}</Badge>
              <Text size="sm" c="dimmed">
                LocalQueues: {lqs.filter((q) => q.spec?.clusterQueue === name).map((q) => q.metadata.name).join(", ")} · pending{" "}
                {cq.status?.pendingWorkloads ?? 0} · admitted {cq.status?.admittedWorkloads ?? 0}
              </Text>
            </Group>
            <DataTable
              label={`GPU quota of ClusterQueue ${name}`}
              head={["Flavor", "Nominal", "Reserved (never lent)", "Borrowing limit", "Lending limit", "In use", "Borrowed", "Lent", "Idle, lendable to the cohort"]}
              rows={rows.map((q) => {
                const lentNowMilli = lent.get(name)?.get(q.flavor) ?? 0;
                return [
                  q.flavor,
                  gpus(q.nominal),
                  gpus(q.reserved),
                  q.borrowingLimit === undefined ? "no limit" : gpus(q.borrowingLimit),
                  q.lendingLimit === undefined ? "all of nominal" : gpus(q.lendingLimit),
                  gpus(q.used),
                  gpus(q.borrowed),
                  cq.spec?.cohort ? gpus(lentNowMilli) : "—",
                  cq.spec?.cohort ? gpus(Math.max(0, idleLendable(q) - lentNowMilli)) : "—",
                ];
              })}
            />
            {cq.spec?.cohort && (
              <Text size="xs" c="dimmed">
                Lent: this queue&apos;s part of what cohort {cq.spec.cohort}&apos;s other queues borrow now, in proportion to the unused quota each queue may lend.
              </Text>
            )}
          </Stack>
        );
      })}
    </Stack>
  );
}

// What the namespace holds now per flavor, from its open usage records: all a
// team member sees when they may not read the ClusterQueue.
function HeldNow({ ns }: { ns: string }) {
  const { client } = useSession();
  const snap = useSnapshot((signal) => client.list(K.usageRecords, ns, undefined, signal), [ns], 15000);
  if (snap.loading) return <Loading what="what the team holds" />;
  if (snap.error) return <ReadError error={snap.error} what={`the usage records of ${ns}`} />;
  const held = new Map<string, number>();
  for (const r of snap.data!.items)
    if (!r.spec?.end) held.set(r.spec?.flavor ?? "<none>", (held.get(r.spec?.flavor ?? "<none>") ?? 0) + Number(r.spec?.gpuMilli ?? 0));
  if (held.size === 0) return <Text size="sm">{ns} holds no GPU now.</Text>;
  return (
    <DataTable
      label={`GPUs ${ns} holds now`}
      head={["Flavor", "GPUs held now"]}
      rows={[...held.entries()].sort().map(([f, m]) => [f, gpus(m)])}
    />
  );
}

function UsageChart({ ns }: { ns: string }) {
  const { client } = useSession();
  const snap = useSnapshot((signal) => client.list(K.usageRecords, ns, undefined, signal), [ns], 60000);
  const data = useMemo(() => {
    if (!snap.data) return null;
    const now = Date.now();
    const until = Math.ceil(now / HOUR) * HOUR;
    return buckets(snap.data.items, until - DAY, until, now, HOUR);
  }, [snap.data]);
  const series = useMemo(
    () => (data ? [{ label: "GPU-hours allocated", values: data.allocated, color: "#228be6" }, { label: "GPU-hours used", values: data.used, color: "#12b886" }] : []),
    [data],
  );
  if (snap.loading) return <Loading what="usage records" />;
  if (snap.error) return <ReadError error={snap.error} what={`the usage records of ${ns}`} />;
  if (snap.data!.items.length === 0) return <Empty>No usage yet: nothing of {ns} has been admitted.</Empty>;
  return <TimeChart label={`GPU-hours allocated and used per hour by ${ns} over the last 24 hours`} t={data!.t} series={series} unit="GPU-hours per hour" />;
}

function Members({ ns }: { ns: string }) {
  const { client } = useSession();
  const snap = useSnapshot((signal) => client.list(K.roleBindings, ns, undefined, signal), [ns], 30000);
  if (snap.loading) return <Loading what="members" />;
  if (snap.error) return <ReadError error={snap.error} what={`the RoleBindings of ${ns} (who is a member)`} />;
  const items = snap.data!.items;
  if (items.length === 0) return <Empty>No RoleBinding in {ns}: nobody but cluster-wide admins may work here.</Empty>;
  return (
    <DataTable
      label={`RoleBindings of ${ns}`}
      head={["Subject", "Kind", "Role", "Binding"]}
      rows={items.flatMap((b) =>
        (b.subjects ?? []).map((s: { kind: string; name: string; namespace?: string }) => [
          s.namespace ? `${s.namespace}/${s.name}` : s.name,
          s.kind,
          `${b.roleRef?.kind ?? ""} ${b.roleRef?.name ?? ""}`,
          b.metadata.name,
        ]),
      )}
    />
  );
}

function Budgets({ ns }: { ns: string }) {
  const { client } = useSession();
  const snap = useSnapshot((signal) => client.list(K.budgets, ns, undefined, signal), [ns], 30000);
  if (snap.loading) return <Loading what="budgets" />;
  if (snap.error) return <ReadError error={snap.error} what={`the budgets of ${ns}`} />;
  const items = snap.data!.items;
  if (items.length === 0) return <Empty>No Budget in {ns}: spend is not capped.</Empty>;
  return (
    <DataTable
      label={`Budgets of ${ns}`}
      head={["Budget", "Period", "Cost used / cap", "GPU-hours used / cap", "State"]}
      rows={items.map((b) => {
        const exceeded = (b.status?.conditions ?? []).find((c: { type: string }) => c.type === "Exceeded");
        return [
          b.metadata.name,
          `${b.spec?.period ?? ""}${b.status?.periodStart ? ` (${b.status.periodStart.slice(0, 10)} to ${b.status.periodEnd?.slice(0, 10)})` : ""}`,
          b.spec?.cost ? `${money(Number(b.status?.usedCost ?? 0))} / ${money(Number(b.spec.cost))}` : `${money(Number(b.status?.usedCost ?? 0))} (no cap)`,
          b.spec?.gpuHours ? `${b.status?.usedGpuHours ?? 0} / ${b.spec.gpuHours}` : `${b.status?.usedGpuHours ?? 0} (no cap)`,
          <Text key="s" size="sm" c={exceeded?.status === "True" ? "red" : undefined}>
            {exceeded?.message ?? "not evaluated yet"}
          </Text>,
        ];
      })}
    />
  );
}

export default function Team() {
  const { ns = "" } = useParams();
  return (
    <Page title={`Team ${ns}`} intro="Quota, usage, members and budgets of this namespace. GPU figures are in GPUs (0.25 is a quarter device).">
      <Section title="Quota per flavor (nvidia.com/gpu)">
        <Quota ns={ns} />
      </Section>
      <Section title="Usage over the last 24 hours">
        <UsageChart ns={ns} />
      </Section>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Section title="Members and roles">
          <Members ns={ns} />
        </Section>
        <Section title="Budget and spend">
          <Budgets ns={ns} />
        </Section>
      </SimpleGrid>
    </Page>
  );
}
