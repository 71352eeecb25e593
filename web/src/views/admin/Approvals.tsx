import { Badge, Button, Group, Modal, Stack, Text, Textarea, Title, Tooltip } from "@mantine/core";
import { useState } from "react";
import { useParams } from "react-router-dom";
import { resourcePath, type KubeObject } from "../../api/client";
import { useSnapshot, useWatch } from "../../api/hooks";
import { K } from "../../api/kinds";
import { useCan } from "../../auth/rbac";
import { useSession } from "../../auth/session";
import { Empty, ErrorNote, Loading, StateBadge } from "../../ui/common";
import { age, gpus, milliGpu } from "../../ui/format";
import { DataTable, Page, ReadError } from "./parts";

// ApprovalRequests of the namespace (docs/scheduling.md "Approval gates"): those
// waiting, with who asked, what and why; approve or deny with a reason, as
// `tessera approve/deny` do (a PUT of the approval subresource with an Approved
// or Denied condition); decided ones below.

type Decision = "approve" | "deny";

function Decide({ req, decision, onClose }: { req: KubeObject; decision: Decision; onClose: () => void }) {
  const { client } = useSession();
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const approve = decision === "approve";
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const { name, namespace } = req.metadata;
      await client.request("PUT", resourcePath(K.approvalRequests, namespace, name, "approval"), {
        body: {
          apiVersion: "tessera.dev/v1",
          kind: "ApprovalRequest",
          metadata: { name, namespace },
          status: {
            conditions: [
              { type: approve ? "Approved" : "Denied", status: "True", reason: approve ? "TesseraApprove" : "TesseraDeny", message: reason.trim() },
            ],
          },
        },
      });
      onClose();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal opened onClose={onClose} title={`${approve ? "Approve" : "Deny"} ${req.spec?.workload ?? req.metadata.name}`}>
      <Stack>
        <Text size="sm">{(req.spec?.reasons ?? []).join("; ")}</Text>
        <Textarea
          label="Reason"
          description={approve ? "Recorded on the request and in the audit log (optional)" : "The requester reads it (required)"}
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value)}
          autosize
          minRows={2}
          data-autofocus
        />
        {error !== null && <ErrorNote error={error} />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color={approve ? "green" : "red"} loading={busy} disabled={!approve && reason.trim() === ""} onClick={submit}>
            {approve ? "Approve" : "Deny"}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

// What a workload asks for: GPUs over all its pods, and its run-time limit.
export function asks(w: KubeObject | undefined): string {
  if (!w) return "";
  let milli = 0;
  for (const ps of w.spec?.podSets ?? [])
    for (const c of ps.template?.spec?.containers ?? [])
      milli += (ps.count ?? 1) * milliGpu(c.resources?.requests?.["nvidia.com/gpu"] ?? c.resources?.limits?.["nvidia.com/gpu"]);
  // The run-time limit the server derives from the Job (activeDeadlineSeconds).
  const limit = Number(w.metadata.annotations?.["tessera.dev/max-run-seconds"] ?? w.spec?.maximumExecutionTimeSeconds ?? 0);
  return `${gpus(milli)} GPUs${limit ? `, at most ${Math.round(limit / 60)} min` : ", no run-time limit"}`;
}

const decidedBy = (r: KubeObject) => {
  const c = (r.status?.conditions ?? []).find((x: { type: string; status: string }) => x.status === "True");
  return c?.message ?? (r.status?.approvals ?? []).map((a: { user: string; reason?: string }) => `${a.user}${a.reason ? `: ${a.reason}` : ""}`).join("; ");
};

export default function Approvals() {
  const { ns = "" } = useParams();
  const live = useWatch(K.approvalRequests, ns);
  const { client } = useSession();
  const workloads = useSnapshot((signal) => client.list(K.workloads, ns, undefined, signal), [ns], 10000);
  const workloadOf = (r: KubeObject) => workloads.data?.items.find((w) => w.metadata.name === r.spec?.workload);
  const canDecide = useCan({ verb: "update", resource: K.approvalRequests, subresource: "approval", namespace: ns });
  const [open, setOpen] = useState<{ req: KubeObject; decision: Decision } | null>(null);
  const pending = live.items.filter((r) => (r.status?.phase ?? "Pending") === "Pending");
  const decided = live.items
    .filter((r) => (r.status?.phase ?? "Pending") !== "Pending")
    .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""));
  const why = canDecide === false ? "You may not decide approvals in this namespace (it needs update on approvalrequests/approval)" : "";
  if (live.error) return <Page title="Approvals"><ReadError error={live.error} what={`the approval requests of ${ns}`} /></Page>;
  return (
    <Page title="Approvals" intro={`Work in ${ns} that crossed an ApprovalPolicy waits here, outside the queue and holding no quota, until approved.`}>
      {live.loading ? (
        <Loading what="approval requests" />
      ) : (
        <>
          <Title order={3}>Waiting</Title>
          {pending.length === 0 ? (
            <Empty>No request waits for approval in {ns}.</Empty>
          ) : (
            <DataTable
              label="Approval requests waiting"
              head={["Workload", "Requested by", "Asks", "Why it needs approval", "Approvals", "Waiting", "Expires", "Decision"]}
              rows={pending.map((r) => [
                <Text key="w" fw={600}>{r.spec?.workload ?? r.metadata.name}</Text>,
                r.spec?.requester ?? "",
                asks(workloadOf(r)),
                <Stack key="r" gap={2}>
                  {(r.spec?.reasons ?? []).map((x: string) => (
                    <Text key={x} size="sm">{x}</Text>
                  ))}
                  <Group gap={4}>
                    {(r.spec?.policies ?? []).map((p: string) => (
                      <Badge key={p} variant="outline" size="xs">{p}</Badge>
                    ))}
                  </Group>
                </Stack>,
                `${(r.status?.approvals ?? []).length} of ${r.spec?.requiredApprovals ?? 1}`,
                age(r.metadata.creationTimestamp),
                r.spec?.expiresAt ? <Tooltip key="e" label={r.spec.expiresAt}><Text size="sm">in {age(new Date().toISOString(), Date.parse(r.spec.expiresAt))}</Text></Tooltip> : "",
                canDecide ? (
                  <Group key="d" gap="xs" wrap="nowrap">
                    <Button size="xs" color="green" onClick={() => setOpen({ req: r, decision: "approve" })} aria-label={`Approve ${r.metadata.name}`}>
                      Approve
                    </Button>
                    <Button size="xs" color="red" variant="light" onClick={() => setOpen({ req: r, decision: "deny" })} aria-label={`Deny ${r.metadata.name}`}>
                      Deny
                    </Button>
                  </Group>
                ) : (
                  <Text key="d" size="xs" c="dimmed" title={why}>
                    {canDecide === undefined ? "…" : `Approvers: ${(r.spec?.approvers ?? []).join(", ")}`}
                  </Text>
                ),
              ])}
            />
          )}
          <Title order={3}>Decided</Title>
          {decided.length === 0 ? (
            <Empty>No request has been decided yet.</Empty>
          ) : (
            <DataTable
              label="Decided approval requests"
              head={["Workload", "Requested by", "Why", "Outcome", "Decision", "Asked"]}
              rows={decided.map((r) => [
                r.spec?.workload ?? r.metadata.name,
                r.spec?.requester ?? "",
                (r.spec?.reasons ?? []).join("; "),
                <StateBadge key="p" state={r.status?.phase} />,
                decidedBy(r),
                age(r.metadata.creationTimestamp),
              ])}
            />
          )}
        </>
      )}
      {open && <Decide req={open.req} decision={open.decision} onClose={() => setOpen(null)} />}
    </Page>
  );
}
