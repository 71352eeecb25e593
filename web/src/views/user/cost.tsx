import { Text } from "@mantine/core";
import type { KubeObject } from "../../api/client";
import { useSnapshot } from "../../api/hooks";
import { useSession } from "../../auth/session";
import { gpus, milliGpu } from "../../ui/format";
import { flavorPrices, queueFlavors } from "./workload";

// The GPUs an object about to be created asks for, whatever its kind.
export function objectMilliGpu(o: KubeObject | null | undefined): number {
  if (!o) return 0;
  const s = o.spec ?? {};
  if (o.kind === "Notebook") return milliGpu(s.gpu);
  const containers = (t: KubeObject["spec"]) =>
    (t?.spec?.containers ?? []).reduce(
      (a: number, c: { resources?: { limits?: Record<string, string>; requests?: Record<string, string> } }) =>
        a + milliGpu(c.resources?.limits?.["nvidia.com/gpu"] ?? c.resources?.requests?.["nvidia.com/gpu"]),
      0,
    );
  if (o.kind === "TrainingJob") return containers(s.template) * (s.replicas ?? s.minReplicas ?? 1);
  if (o.kind === "InferenceService") return containers(s.template) * Math.max(1, s.minReplicas ?? 1);
  if (o.kind === "Job" && s.tasks) return s.tasks.reduce((a: number, t: KubeObject) => a + containers(t.template) * (t.replicas ?? 1), 0);
  if (o.kind === "Job") return containers(s.template) * (s.parallelism ?? 1);
  if (o.kind === "Workload")
    return (s.podSets ?? []).reduce((a: number, p: KubeObject) => a + containers(p.template) * (p.count ?? 1), 0);
  return 0;
}

export function objectQueue(o: KubeObject | null | undefined): string {
  return o?.metadata?.labels?.["kueue.x-k8s.io/queue-name"] ?? o?.spec?.queueName ?? o?.spec?.queue ?? "default";
}

// "$0.62/h on h100 · $0.30/h on a100": the price of the flavors the queue may place it on.
export function CostPerHour({ namespace, object }: { namespace: string; object: KubeObject | null }) {
  const { client } = useSession();
  const queue = objectQueue(object);
  const info = useSnapshot(
    async (signal) => ({
      flavors: await queueFlavors(client, namespace, queue, signal),
      prices: await flavorPrices(client, signal),
    }),
    [client, namespace, queue],
    60000,
  );
  const milli = objectMilliGpu(object);
  if (!object) return null;
  if (milli === 0)
    return (
      <Text size="sm" data-testid="cost">
        No GPUs asked: no GPU cost.
      </Text>
    );
  if (info.error)
    return (
      <Text size="sm" c="red" data-testid="cost">
        Cost unknown: {info.error.message}
      </Text>
    );
  if (!info.data) return null;
  const { flavors, prices } = info.data;
  if (!prices || flavors.length === 0)
    return (
      <Text size="sm" c="dimmed" data-testid="cost">
        {gpus(milli)} GPU{milli === 1000 ? "" : "s"} asked: the scheduler's forecast gives its cost per hour (your role does
        not read the queue's flavors, where the prices are set).
      </Text>
    );
  const parts = flavors.map((f) => {
    const p = prices.get(f);
    return p === undefined ? `no price on ${f}` : `$${((milli / 1000) * p).toFixed(2)}/h on ${f}`;
  });
  return (
    <Text size="sm" data-testid="cost">
      Cost: <b>{parts.join(" · ")}</b> ({gpus(milli)} GPU × the flavor's price per GPU-hour, queue {queue})
    </Text>
  );
}
