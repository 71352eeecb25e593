import { useEffect, useState } from "react";
import { Alert, Badge, Group, Loader, Text } from "@mantine/core";
import type { KubeObject } from "../../api/client";
import { describeError } from "../../api/client";
import { useSession } from "../../auth/session";

// What the scheduler would do with the object about to be submitted: a
// tessera.dev/v1 SchedulingReview (docs/scheduling.md "Forecasts"), asked again
// a moment after the object stops changing. Nothing is stored or reserved.
export interface Forecast {
  wouldAdmit: boolean;
  reason: string;
  message: string;
  clusterQueue?: string;
  flavors?: string[];
  nodes?: string[];
  queuePosition?: number;
  estimatedStart?: string;
  approvalReasons?: string[];
  gpus: string;
  costPerHour: string;
}

export function reviewPath(namespace: string): string {
  return `/apis/tessera.dev/v1/namespaces/${encodeURIComponent(namespace)}/schedulingreviews`;
}

// "would run now on h100-ondemand", "waits: position 3, estimated start 14:20".
export function headline(f: Forecast, now = new Date()): string {
  if (f.reason === "WaitingForApproval") return "needs an approval first";
  if (f.wouldAdmit) return `would run now on ${(f.flavors ?? []).join(", ")}`;
  if (f.reason === "Inactive") return "suspended: not queued until resumed";
  const parts: string[] = [];
  if (f.queuePosition) parts.push(`position ${f.queuePosition}`);
  if (f.estimatedStart) {
    const start = new Date(f.estimatedStart);
    const sameDay = start.toDateString() === now.toDateString();
    const time = start.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    parts.push(`estimated start ${sameDay ? time : `${start.toLocaleDateString()} ${time}`}`);
  }
  return parts.length ? `waits: ${parts.join(", ")}` : "waits";
}

export function EstimatedStart(props: { namespace: string; object: KubeObject | null }) {
  const { client } = useSession();
  const [forecast, setForecast] = useState<Forecast | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asking, setAsking] = useState(false);
  const key = props.object ? JSON.stringify(props.object) : "";

  useEffect(() => {
    if (!props.object) {
      setForecast(null);
      setError(null);
      return;
    }
    let live = true;
    const timer = setTimeout(() => {
      setAsking(true);
      client
        .post<{ status: Forecast }>(reviewPath(props.namespace), {
          apiVersion: "tessera.dev/v1",
          kind: "SchedulingReview",
          spec: { object: props.object },
        })
        .then((r) => {
          if (!live) return;
          setForecast(r.status);
          setError(null);
        })
        .catch((e) => {
          if (!live) return;
          setForecast(null);
          setError(describeError(e));
        })
        .finally(() => live && setAsking(false));
    }, 400);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key, props.namespace]); // eslint-disable-line react-hooks/exhaustive-deps

  if (!props.object) return null;
  if (error) {
    return (
      <Alert color="gray" title="No start estimate" data-testid="estimated-start">
        {error}
      </Alert>
    );
  }
  if (!forecast) {
    return (
      <Group gap="xs" data-testid="estimated-start">
        <Loader size="xs" />
        <Text size="sm">Asking the scheduler when it would start…</Text>
      </Group>
    );
  }
  const color = forecast.reason === "WaitingForApproval" ? "yellow" : forecast.wouldAdmit ? "green" : "orange";
  const cost = Number(forecast.costPerHour);
  return (
    <Alert
      color={color}
      data-testid="estimated-start"
      data-would-admit={String(forecast.wouldAdmit)}
      title={
        <Group gap="sm">
          <span>{headline(forecast)}</span>
          {cost > 0 && (
            <Badge variant="light" color="gray" tt="none" aria-label="cost per hour">
              {/* Where it would run, or the dearest flavor of its queue while that is not known. */}
              {forecast.flavors?.length ? "" : "up to "}${cost.toFixed(cost < 1 ? 3 : 2)}/h
            </Badge>
          )}
          {asking && <Loader size="xs" aria-label="updating" />}
        </Group>
      }
    >
      <Text size="sm">{forecast.message}</Text>
      <Text size="xs" c="dimmed" mt={4}>
        {forecast.gpus} GPU{forecast.gpus === "1" ? "" : "s"}
        {forecast.clusterQueue ? ` · ClusterQueue ${forecast.clusterQueue}` : ""} · the scheduler's answer for now, not a
        reservation
      </Text>
    </Alert>
  );
}
