import { Badge, Button, Card, Group, List, Modal, Stack, Text, Textarea, Title, Tooltip } from "@mantine/core";
import { useState } from "react";
import { parse } from "yaml";
import { ApiError, type KubeObject, type Resource } from "../../api/client";
import { useSnapshot } from "../../api/hooks";
import { K } from "../../api/kinds";
import { useCan } from "../../auth/rbac";
import { useSession } from "../../auth/session";
import { Empty, ErrorNote, Loading } from "../../ui/common";
import { age } from "../../ui/format";
import { DataTable, Page, ReadError } from "./parts";

// The platform's rules: priority classes, approval policies, budgets of every
// namespace, the template catalogue. New policies and budgets are written as
// YAML, checked by the server first (dryRun) so its field errors show before
// anything is stored.

const EXAMPLES: Record<string, string> = {
  ApprovalPolicy: `apiVersion: tessera.dev/v1
kind: ApprovalPolicy
metadata:
  name: big-jobs
spec:
  namespaceSelector: {matchLabels: {tessera.dev/team: nlp}}
  thresholds:
    gpus: 8
  requiredApprovals: 1
  expireAfter: 72h
`,
  Budget: `apiVersion: tessera.dev/v1
kind: Budget
metadata:
  name: monthly
  namespace: team-nlp
spec:
  period: Monthly
  cost: "5000"
`,
  PriorityClass: `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: urgent
value: 5000
preemptionPolicy: PreemptLowerPriority
description: Deadlines this week.
`,
};

function CreateYaml({ r, onDone }: { r: Resource; onDone: () => void }) {
  const { client } = useSession();
  const [opened, setOpened] = useState(false);
  const [text, setText] = useState(EXAMPLES[r.kind]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const allowed = useCan({ verb: "create", resource: r });
  const submit = async () => {
    setError(null);
    let obj: KubeObject;
    try {
      obj = parse(text) as KubeObject;
      if (!obj || typeof obj !== "object" || !obj.metadata) throw new Error("the YAML must be one object with metadata");
    } catch (e) {
      setError(e);
      return;
    }
    setBusy(true);
    try {
      const ns = r.namespaced ? obj.metadata.namespace : undefined;
      await client.create(r, ns, obj, true);
      await client.create(r, ns, obj);
      setOpened(false);
      onDone();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Tooltip label={allowed === false ? `You may not create ${r.plural}` : `Create a ${r.kind} from YAML`}>
        <Button size="xs" variant="light" disabled={!allowed} onClick={() => setOpened(true)}>
          New {r.kind}
        </Button>
      </Tooltip>
      <Modal opened={opened} onClose={() => setOpened(false)} title={`New ${r.kind}`} size="lg">
        <Stack>
          <Textarea
            label="YAML"
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            autosize
            minRows={10}
            styles={{ input: { fontFamily: "ui-monospace, monospace", fontSize: 13 } }}
          />
          {error !== null && (
            <>
              <ErrorNote error={error} title="The server refused it" />
              {error instanceof ApiError && error.causes.length > 1 && (
                <List size="sm" aria-label="Field errors">
                  {error.causes.map((c, i) => (
                    <List.Item key={i}>
                      <b>{c.field}</b>: {c.message}
                    </List.Item>
                  ))}
                </List>
              )}
            </>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setOpened(false)}>
              Cancel
            </Button>
            <Button loading={busy} onClick={submit}>
              Create
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

function Section({ title, r, head, row, empty }: { title: string; r: Resource; head: string[]; row: (o: KubeObject) => React.ReactNode[]; empty: string }) {
  const { client } = useSession();
  const snap = useSnapshot((signal) => client.list(r, undefined, undefined, signal), [r], 15000);
  const items = [...(snap.data?.items ?? [])].sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  return (
    <Card withBorder component="section" aria-label={title}>
      <Group justify="space-between" mb="sm">
        <Title order={3}>{title}</Title>
        {EXAMPLES[r.kind] && <CreateYaml r={r} onDone={snap.reload} />}
      </Group>
      {snap.loading ? (
        <Loading what={title.toLowerCase()} />
      ) : snap.error ? (
        <ReadError error={snap.error} what={title.toLowerCase()} />
      ) : items.length === 0 ? (
        <Empty>{empty}</Empty>
      ) : (
        <DataTable label={title} head={head} rows={items.map(row)} />
      )}
    </Card>
  );
}

const thresholds = (t: Record<string, unknown> = {}) =>
  Object.entries(t)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(", ") : String(v)}`)
    .join("; ");
const selector = (s?: { matchLabels?: Record<string, string> }) =>
  s?.matchLabels ? Object.entries(s.matchLabels).map(([k, v]) => `${k}=${v}`).join(", ") : "every namespace";

export default function Policies() {
  return (
    <Page title="Policies" intro="What governs the fleet: priorities, approval gates, budgets and the launch catalogue.">
      <Section
        title="Priority classes"
        r={K.priorityClasses}
        empty="No PriorityClass."
        head={["Name", "Value", "Preemption", "Never preempted", "Description"]}
        row={(o) => [
          <Group key="n" gap={4}>{o.metadata.name}{o.globalDefault && <Badge size="xs">default</Badge>}</Group>,
          o.value,
          o.preemptionPolicy ?? "PreemptLowerPriority",
          o.metadata.annotations?.["tessera.dev/preemptible"] === "false" || o.metadata.annotations?.["tessera.dev/non-preemptible"] === "true" ? "yes" : "no",
          o.description ?? "",
        ]}
      />
      <Section
        title="Approval policies"
        r={K.approvalPolicies}
        empty="No ApprovalPolicy: nothing waits for approval."
        head={["Name", "Namespaces", "Thresholds (any one)", "Approvals needed", "Self-approval", "Expires after", "Age"]}
        row={(o) => [
          o.metadata.name,
          selector(o.spec?.namespaceSelector),
          thresholds(o.spec?.thresholds),
          o.spec?.requiredApprovals ?? 1,
          o.spec?.allowSelfApproval ? "allowed" : "not counted",
          o.spec?.expireAfter ?? "72h",
          age(o.metadata.creationTimestamp),
        ]}
      />
      <Section
        title="Budgets"
        r={K.budgets}
        empty="No Budget in any namespace: spend is not capped."
        head={["Namespace", "Name", "Period", "Cost cap", "GPU-hours cap", "Used", "State"]}
        row={(o) => {
          const c = (o.status?.conditions ?? []).find((x: { type: string }) => x.type === "Exceeded");
          return [
            o.metadata.namespace,
            o.metadata.name,
            o.spec?.period,
            o.spec?.cost ?? "—",
            o.spec?.gpuHours ?? "—",
            `$${o.status?.usedCost ?? 0} · ${o.status?.usedGpuHours ?? 0} GPU-h`,
            <Text key="s" size="sm" c={c?.status === "True" ? "red" : undefined}>{c?.reason ?? "not evaluated yet"}</Text>,
          ];
        }}
      />
      <Section
        title="Templates"
        r={K.templates}
        empty="No Template: the launch catalogue is empty."
        head={["Name", "Category", "Creates", "Display name", "Parameters"]}
        row={(o) => [
          o.metadata.name,
          o.spec?.category ?? "",
          o.spec?.object?.kind ?? "",
          o.spec?.displayName ?? "",
          (o.spec?.parameters ?? []).map((p: { name: string; required?: boolean }) => p.name + (p.required ? "*" : "")).join(", "),
        ]}
      />
    </Page>
  );
}
