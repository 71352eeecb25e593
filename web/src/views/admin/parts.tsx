import { Alert, Stack, Table, Text, Title, useComputedColorScheme } from "@mantine/core";
import { useEffect, useRef, type ReactNode } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { ApiError, describeError } from "../../api/client";
import { ErrorNote } from "../../ui/common";

// Pieces the admin views share: a titled page, a "not allowed" note, a table
// with headers, a uPlot time chart that follows the theme.

export function Page({ title, intro, children }: { title: string; intro?: ReactNode; children: ReactNode }) {
  return (
    <Stack gap="md" maw={1400}>
      <Title order={2}>{title}</Title>
      {intro && <Text c="dimmed" size="sm">{intro}</Text>}
      {children}
    </Stack>
  );
}

// A failed read: "Not allowed" in plain words when RBAC refused it.
export function ReadError({ error, what }: { error: unknown; what: string }) {
  if (error instanceof ApiError && error.forbidden)
    return (
      <Alert color="yellow" title="Not allowed" role="alert">
        You are not allowed to see {what}. Ask your platform team for access. ({describeError(error)})
      </Alert>
    );
  return <ErrorNote error={error} title={`Could not read ${what}`} />;
}

export function DataTable({ label, head, rows }: { label: string; head: string[]; rows: ReactNode[][] }) {
  return (
    <Table.ScrollContainer minWidth={600}>
      <Table striped highlightOnHover aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            {head.map((h) => (
              <Table.Th key={h} scope="col">
                {h}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((r, i) => (
            <Table.Tr key={i}>
              {r.map((c, j) => (
                <Table.Td key={j}>{c}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

export interface Series {
  label: string;
  values: number[];
  color: string;
}

// A line chart over time (t in seconds), redrawn when its data or the theme change;
// `step`: each value holds until the next point (a count over time).
export function TimeChart({ label, t, series, unit, step = false }: { label: string; t: number[]; series: Series[]; unit: string; step?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const dark = useComputedColorScheme("light") === "dark";
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const axis = { stroke: dark ? "#c1c2c5" : "#495057", grid: { stroke: dark ? "#373a40" : "#e9ecef" } };
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 240,
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            fill: s.color + "22",
            ...(step ? { paths: uPlot.paths.stepped!({ align: 1 }), points: { show: false } } : {}),
          })),
        ],
        axes: [axis, { ...axis, label: unit }],
        scales: { x: { time: true } },
      },
      [t, ...series.map((s) => s.values)],
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(320, el.clientWidth), height: 240 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [t, series, unit, dark, step]);
  return <div ref={box} role="img" aria-label={label} />;
}

export const GPU = "nvidia.com/gpu";
