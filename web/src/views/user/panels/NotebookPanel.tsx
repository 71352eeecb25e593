// A Notebook: its URL, its idle policy and last activity, its GPUs' use over the
// last hour, and whether it is suspended or resuming. (Opening it is the page
// header's.)
import { Alert, Stack, Text } from "@mantine/core";
import { useMemo } from "react";
import { Empty } from "../../../ui/common";
import { age, gpus, milliGpu } from "../../../ui/format";
import { Chart } from "./Chart";
import type { PanelProps } from "./index";
import { absolute, CopyLine, Facts, Section, useNow } from "./parts";
import { gpuSeries } from "./shape";

export default function NotebookPanel({ object: nb, namespace }: PanelProps) {
  const now = useNow(15000);
  const spec = nb.spec ?? {};
  const st = nb.status ?? {};
  const name = nb.metadata.name;
  const data = useMemo(() => gpuSeries(nb), [nb]);
  // The hour up to the latest sample, however few samples it has.
  const last = data[0].length ? data[0][data[0].length - 1] : 0;
  const hour = useMemo((): [number, number] => [last - 3600, last + 60], [last]);
  const timeout: string | undefined = spec.idle?.timeout;
  const ago = (t?: string) => (t ? `${age(t, now)} ago` : "");
  return (
    <Stack gap="md" data-testid="panel-notebooks">
      {(st.phase === "Suspended" || st.phase === "Resuming") && (
        <Alert color={st.phase === "Suspended" ? "gray" : "blue"} variant="light" title={st.phase}>
          {st.phase === "Suspended"
            ? `${st.message ? `${st.message}. ` : ""}Its GPU is free; its home volume is kept. Opening it queues it again.`
            : st.message || "Queued again; it starts when admitted."}
        </Alert>
      )}
      <Section title="Address">
        {st.url ? (
          <Stack gap="xs">
            <CopyLine value={absolute(st.url)} label="URL" />
            <CopyLine value={`tessera notebook open ${name} -n ${namespace}`} label="CLI command" />
          </Stack>
        ) : (
          <Empty>No URL yet.</Empty>
        )}
      </Section>
      <Section title="Idle policy">
        <Facts
          facts={[
            {
              label: "Suspended after",
              value: timeout === "0" ? "never (idle timeout off)" : timeout ? `${timeout} quiet` : "the queue's idle timeout",
              hint: "GPU under 5% and kernels quiet, both, for this long",
            },
            { label: "Last activity", value: ago(st.lastActivity) || "not reported" },
            { label: "Quiet since", value: ago(st.idleSince) || "active" },
            ...(st.suspendedAt ? [{ label: "Suspended", value: ago(st.suspendedAt) }] : []),
            { label: "GPU", value: spec.gpu ? gpus(milliGpu(spec.gpu)) : spec.gpuMemory ? `${spec.gpuMemory} of memory` : "none" },
            ...(st.homeVolume ? [{ label: "Home volume", value: st.homeVolume }] : []),
          ]}
        />
      </Section>
      <Section title="GPU use over the last hour" testId="notebook-gpu">
        {data[0].length > 0 ? (
          <>
            <Text size="sm">
              Average {st.gpuUtilization?.averagePercent ?? 0}% over {data[0].length} minute{data[0].length === 1 ? "" : "s"} with a
              sample.
            </Text>
            <Chart
              label={`GPU utilisation per minute over the last hour, averaging ${st.gpuUtilization?.averagePercent ?? 0}%`}
              data={data}
              time
              xLabel="time"
              yLabel="GPU %"
              xRange={hour}
              yRange={[0, 100]}
              series={[{ label: "GPU use", color: "green", markers: true }]}
              height={200}
            />
          </>
        ) : (
          <Empty>No samples yet: one comes each minute while it holds a GPU.</Empty>
        )}
      </Section>
    </Stack>
  );
}
