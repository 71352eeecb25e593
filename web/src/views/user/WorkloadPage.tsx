import { Alert, Anchor, Badge, Button, Card, Group, Modal, Stack, Table, Tabs, Text, Title, Tooltip } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import { describeError, type KubeObject, type Resource } from "../../api/client";
import { useObject, useSnapshot } from "../../api/hooks";
import { K } from "../../api/kinds";
import { useCan } from "../../auth/rbac";
import { useSession } from "../../auth/session";
import { Empty, ErrorNote, Loading, StateBadge } from "../../ui/common";
import { age, gpus, milliGpu } from "../../ui/format";
import { Logs } from "./Logs";
import { panelFor } from "./panels";
import { conditions, OWNER_LABEL, summarize, workloadNameFor, type Condition } from "./workload";

const KINDS: Record<string, Resource> = {
  notebooks: K.notebooks,
  jobs: K.jobs,
  trainingjobs: K.trainingJobs,
  inferenceservices: K.inferenceServices,
  sweeps: K.sweeps,
  pipelineruns: K.pipelineRuns,
  pipelines: K.pipelines,
  workloads: K.workloads,
};

// The object's own state, in its kind's words.
function stateOf(o: KubeObject, wl?: KubeObject): string {
  const st = o.status ?? {};
  if (typeof st.phase === "string") return st.phase;
  if (st.state?.phase) return st.state.phase;
  const done = conditions(o).find((c) => ["Complete", "Failed", "Succeeded"].includes(c.type) && c.status === "True");
  if (done) return done.type;
  if (o.spec?.suspend) return "Suspended";
  if (o.kind === "Job" && (st.active ?? 0) > 0) return "Running";
  if (wl) return summarize(wl).state;
  return "Unknown";
}

function ConditionsTable({ items, label }: { items: Condition[]; label: string }) {
  if (!items.length) return <Text c="dimmed">No conditions yet.</Text>;
  return (
    <Table aria-label={label} striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Type</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Reason</Table.Th>
          <Table.Th>Message</Table.Th>
          <Table.Th>Since</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {items.map((c) => (
          <Table.Tr key={c.type}>
            <Table.Td>{c.type}</Table.Td>
            <Table.Td>{c.status}</Table.Td>
            <Table.Td>{c.reason}</Table.Td>
            <Table.Td style={{ whiteSpace: "pre-wrap" }}>{c.message}</Table.Td>
            <Table.Td>{age(c.lastTransitionTime)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function Events({ events }: { events: KubeObject[] }) {
  if (!events.length) return <Text c="dimmed">No events.</Text>;
  return (
    <Table aria-label="Events" striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Type</Table.Th>
          <Table.Th>Reason</Table.Th>
          <Table.Th>Object</Table.Th>
          <Table.Th>Message</Table.Th>
          <Table.Th>Count</Table.Th>
          <Table.Th>Last seen</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {events.map((e) => (
          <Table.Tr key={e.metadata.name} bg={e.type === "Warning" ? "var(--mantine-color-red-light)" : undefined} data-event-type={e.type}>
            <Table.Td>{e.type === "Warning" ? <Badge color="red">Warning</Badge> : e.type}</Table.Td>
            <Table.Td>{e.reason}</Table.Td>
            <Table.Td>
              {e.involvedObject?.kind}/{e.involvedObject?.name}
            </Table.Td>
            <Table.Td>{e.message}</Table.Td>
            <Table.Td>{e.count}</Table.Td>
            <Table.Td>{age(e.lastTimestamp ?? e.metadata.creationTimestamp)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function Pods({ pods }: { pods: KubeObject[] }) {
  if (!pods.length) return <Text c="dimmed">No pods: they are made once the workload is admitted.</Text>;
  return (
    <Table aria-label="Pods" striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Name</Table.Th>
          <Table.Th>Phase</Table.Th>
          <Table.Th>Node</Table.Th>
          <Table.Th>GPUs</Table.Th>
          <Table.Th>Restarts</Table.Th>
          <Table.Th>Age</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {pods.map((p) => {
          const cs = p.status?.containerStatuses ?? [];
          const milli = (p.spec?.containers ?? []).reduce(
            (a: number, c: KubeObject) => a + milliGpu(c.resources?.limits?.["nvidia.com/gpu"]),
            0,
          );
          const devices = p.metadata.annotations?.["tessera.dev/gpu-devices"];
          return (
            <Table.Tr key={p.metadata.name}>
              <Table.Td>{p.metadata.name}</Table.Td>
              <Table.Td>
                <StateBadge state={p.status?.phase} />
              </Table.Td>
              <Table.Td>{p.spec?.nodeName ?? "—"}</Table.Td>
              <Table.Td>
                {gpus(milli)}
                {devices ? ` (${devices})` : ""}
              </Table.Td>
              <Table.Td>{cs.reduce((a: number, c: { restartCount?: number }) => a + (c.restartCount ?? 0), 0)}</Table.Td>
              <Table.Td>{age(p.metadata.creationTimestamp)}</Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

// The single-use browser login `tessera open` gets (docs/security.md "Browser logins").
function OpenNotebook({ ns, nb }: { ns: string; nb: KubeObject }) {
  const { client } = useSession();
  const [error, setError] = useState<string | null>(null);
  const url: string = nb.status?.url ?? `/api/v1/namespaces/${ns}/services/notebook-${nb.metadata.name}:http/proxy/`;
  const prefix = `/api/v1/namespaces/${ns}/services/`;
  const svc = url.startsWith(prefix) ? url.slice(prefix.length, url.indexOf("/proxy")) : "";
  const allowed = useCan({ verb: "get", resource: K.services, subresource: "proxy", namespace: ns, name: svc.split(":")[0] });
  const open = async () => {
    setError(null);
    // The tab opens first (a popup must come from the click), then gets its address.
    const tab = window.open("about:blank", "_blank");
    try {
      if (nb.spec?.suspend || nb.status?.phase === "Suspended") {
        const patch: KubeObject = { metadata: { name: nb.metadata.name }, spec: { suspend: false } };
        if (nb.status?.suspendedAt) patch.metadata.annotations = { "tessera.dev/resume-from": nb.status.suspendedAt };
        await client.patch(K.notebooks, ns, nb.metadata.name, patch);
      }
      const login = await client.request<KubeObject>("POST", `${prefix}${svc}/proxylogin`);
      if (!login.status?.url) throw new Error("the server's ProxyLogin has no status.url");
      if (tab) tab.location.href = login.status.url;
      else window.location.href = login.status.url;
    } catch (e) {
      tab?.close();
      setError(describeError(e));
    }
  };
  return (
    <Group gap="xs">
      <Tooltip label="Your role may not reach this notebook's proxy" disabled={allowed !== false}>
        <Button onClick={open} disabled={!svc || allowed === false}>
          Open
        </Button>
      </Tooltip>
      {error && (
        <Text c="red" size="sm" role="alert">
          {error}
        </Text>
      )}
    </Group>
  );
}

function Actions({ ns, plural, r, object }: { ns: string; plural: string; r: Resource; object: KubeObject }) {
  const { client } = useSession();
  const navigate = useNavigate();
  const name = object.metadata.name;
  const canPatch = useCan({ verb: "patch", resource: r, namespace: ns, name });
  const canDelete = useCan({ verb: "delete", resource: r, namespace: ns, name });
  const [confirm, { open, close }] = useDisclosure(false);
  const [error, setError] = useState<string | null>(null);
  const suspendable = ["notebooks", "jobs"].includes(plural);
  const suspended = object.spec?.suspend === true;
  const act = async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
    } catch (e) {
      setError(describeError(e));
    }
  };
  const why = "Your role does not allow it in this namespace";
  return (
    <Group gap="xs">
      {plural === "notebooks" && <OpenNotebook ns={ns} nb={object} />}
      {suspendable && (
        <Tooltip label={why} disabled={canPatch !== false}>
          <Button
            variant="default"
            disabled={canPatch !== true}
            onClick={() => act(() => client.patch(r, ns, name, { spec: { suspend: !suspended } }))}
          >
            {suspended ? "Resume" : "Suspend"}
          </Button>
        </Tooltip>
      )}
      <Tooltip label={why} disabled={canDelete !== false}>
        <Button color="red" variant="light" disabled={canDelete !== true} onClick={open}>
          Delete
        </Button>
      </Tooltip>
      <Modal opened={confirm} onClose={close} title={`Delete ${r.kind} ${name}?`}>
        <Text size="sm">Its Workload and pods go with it; its logs can no longer be read. This cannot be undone.</Text>
        <Group justify="flex-end" mt="md">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button
            color="red"
            onClick={() =>
              act(async () => {
                await client.remove(r, ns, name);
                close();
                navigate(`/ns/${ns}/workloads`);
              })
            }
          >
            Delete
          </Button>
        </Group>
      </Modal>
      {error && (
        <Text c="red" size="sm" role="alert">
          {error}
        </Text>
      )}
    </Group>
  );
}

export default function WorkloadPage() {
  const { ns = "", kind = "", name = "" } = useParams();
  const { client } = useSession();
  const r = KINDS[kind] ?? null;
  const { object, loading, error } = useObject(r, ns, name);
  const wlName = workloadNameFor(kind, name, object);
  const label = OWNER_LABEL[kind];
  // The object is the one watch; its Workload(s), pods and events are read every few seconds.
  const related = useSnapshot(
    async (signal) => {
      const wls = wlName
        ? await client.get(K.workloads, ns, wlName, signal).then((w) => [w], (e) => (e.code === 404 ? [] : Promise.reject(e)))
        : label
          ? (await client.list(K.workloads, ns, { labelSelector: `${label}=${name}` }, signal)).items
          : [];
      const podSel = wls.length === 1 ? `tessera.dev/workload=${wls[0].metadata.name}` : label ? `${label}=${name}` : "";
      const pods = podSel ? (await client.list(K.pods, ns, { labelSelector: podSel }, signal)).items : [];
      const names = [name, ...wls.map((w) => w.metadata.name), ...pods.map((p) => p.metadata.name)];
      const evs = await Promise.all(
        [...new Set(names)].map((n) => client.list(K.events, ns, { fieldSelector: `involvedObject.name=${n}` }, signal)),
      );
      const events = evs
        .flatMap((l) => l.items)
        .sort((a, b) => Date.parse(b.lastTimestamp ?? b.metadata.creationTimestamp ?? "") - Date.parse(a.lastTimestamp ?? a.metadata.creationTimestamp ?? ""));
      return { wls, pods, events };
    },
    [client, ns, kind, name, wlName, label],
    3000,
  );
  if (!r) return <ErrorNote error={new Error(`"${kind}" is not a kind of workload the portal shows`)} />;
  if (loading) return <Loading what={`${r.kind} ${name}`} />;
  if (error || !object) return <ErrorNote error={error} title={`Cannot show ${r.kind} ${name}`} />;
  const wls = related.data?.wls ?? [];
  const pods = related.data?.pods ?? [];
  const wl = wls.length === 1 ? wls[0] : kind === "workloads" ? object : undefined;
  const sum = wl ? summarize(wl) : undefined;
  const waiting = wls.map(summarize).filter((s) => s.state !== "Admitted" && s.state !== "Finished" && s.message);
  const checkpoint = wl?.metadata.annotations?.["tessera.dev/last-checkpoint"];
  const history: KubeObject[] = wl?.status?.podHistory ?? [];
  const preemptions = (related.data?.events ?? []).filter((e) => ["Preempted", "Evicted"].includes(e.reason ?? ""));
  const state = stateOf(object, wl);
  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <Text size="sm" c="dimmed">
            <Anchor component={Link} to={`/ns/${ns}/workloads`}>
              Workloads
            </Anchor>{" "}
            / {r.kind}
          </Text>
          <Group gap="sm">
            <Title order={2}>{name}</Title>
            <StateBadge state={state} />
          </Group>
          <Text size="sm" c="dimmed" data-testid="header-facts">
            {r.kind} · age {age(object.metadata.creationTimestamp)}
            {sum ? ` · ${gpus(sum.milliGpu)} GPU` : ""}
            {sum?.where ? ` · on ${sum.where}${sum.flavor ? ` (${sum.flavor})` : ""}` : ""}
            {sum?.queue ? ` · queue ${sum.queue}` : ""}
          </Text>
        </Stack>
        <Actions ns={ns} plural={kind} r={r} object={object} />
      </Group>
      {waiting.map((s) => (
        <Alert key={s.name} color="yellow" title={`Why ${s.name === wlName || wls.length === 1 ? "it" : s.name} waits: ${s.state}${s.reason ? ` (${s.reason})` : ""}${s.position ? `, position ${s.position}` : ""}`} data-testid="why-waits">
          <Text size="sm" style={{ whiteSpace: "pre-wrap" }}>
            {s.message}
          </Text>
        </Alert>
      ))}
      {related.error && <ErrorNote error={related.error} title="Cannot read its workload, pods or events" />}
      {panelFor(kind, { object, namespace: ns })}
      <Tabs defaultValue="logs" keepMounted={false}>
        <Tabs.List aria-label="Details">
          <Tabs.Tab value="logs">Logs</Tabs.Tab>
          <Tabs.Tab value="pods">Pods ({pods.length})</Tabs.Tab>
          <Tabs.Tab value="conditions">Conditions</Tabs.Tab>
          <Tabs.Tab value="events">Events ({related.data?.events.length ?? 0})</Tabs.Tab>
          <Tabs.Tab value="history">Checkpoint and preemptions</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="logs" pt="sm">
          <Logs ns={ns} pods={pods} />
        </Tabs.Panel>
        <Tabs.Panel value="pods" pt="sm">
          {related.loading ? <Loading what="pods" /> : <Pods pods={pods} />}
        </Tabs.Panel>
        <Tabs.Panel value="conditions" pt="sm">
          <Stack>
            {kind !== "workloads" && <ConditionsTable items={conditions(object)} label={`${r.kind} conditions`} />}
            {wls.map((w) => (
              <Card key={w.metadata.name} withBorder p="sm">
                <Text fw={600} size="sm" mb="xs">
                  Workload <Anchor component={Link} to={`/ns/${ns}/workloads/${w.metadata.name}`}>{w.metadata.name}</Anchor>
                </Text>
                <ConditionsTable items={conditions(w)} label={`Workload ${w.metadata.name} conditions`} />
              </Card>
            ))}
            {kind === "workloads" && <ConditionsTable items={conditions(object)} label="Workload conditions" />}
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="events" pt="sm">
          {related.loading ? <Loading what="events" /> : <Events events={related.data?.events ?? []} />}
        </Tabs.Panel>
        <Tabs.Panel value="history" pt="sm">
          <Stack>
            <Text size="sm">
              Last checkpoint: {checkpoint ? `${age(checkpoint)} ago (${checkpoint})` : "none reported (a pod checkpoints by touching $TESSERA_CHECKPOINT_DIR/.tessera-checkpoint)"}
            </Text>
            {history.length === 0 && preemptions.length === 0 ? (
              <Empty>Never preempted or evicted.</Empty>
            ) : (
              <Table aria-label="Preemption history">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>When</Table.Th>
                    <Table.Th>What</Table.Th>
                    <Table.Th>Details</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {preemptions.map((e) => (
                    <Table.Tr key={e.metadata.name}>
                      <Table.Td>{age(e.lastTimestamp)}</Table.Td>
                      <Table.Td>{e.reason}</Table.Td>
                      <Table.Td>{e.message}</Table.Td>
                    </Table.Tr>
                  ))}
                  {history.map((h, i) => (
                    <Table.Tr key={`h${i}`}>
                      <Table.Td>{h.finishedAt ? age(h.finishedAt) : h.startTime ? `started ${age(h.startTime)} ago` : ""}</Table.Td>
                      <Table.Td>pod {h.name} ({h.phase ?? "gone"})</Table.Td>
                      <Table.Td>{[h.reason, h.message, h.nodeName && `on ${h.nodeName}`].filter(Boolean).join(" · ")}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </Stack>
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
