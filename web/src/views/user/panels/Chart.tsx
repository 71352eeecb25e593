// A uPlot chart that follows its container's width and the colour scheme.
import { Box, useComputedColorScheme, useMantineTheme } from "@mantine/core";
import { useElementSize } from "@mantine/hooks";
import { useEffect, useRef } from "react";
import uPlot from "uplot";

export interface ChartSeries {
  label: string;
  color: string; // a Mantine colour name: "blue", "orange"
  points?: boolean; // dots only, no line
  markers?: boolean; // a line with a dot at each value (few values still show)
  stepped?: boolean;
}

export interface ChartProps {
  label: string; // what the chart shows, for screen readers
  data: uPlot.AlignedData;
  series: ChartSeries[];
  xLabel: string;
  yLabel: string;
  time?: boolean; // x in seconds since the epoch
  integerX?: boolean; // x counts things (trial numbers): whole ticks only
  xRange?: [number, number];
  yRange?: [number, number];
  height?: number;
}

export function Chart({ label, data, series, xLabel, yLabel, time = false, integerX = false, xRange, yRange, height = 240 }: ChartProps) {
  const { ref, width } = useElementSize();
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const theme = useMantineTheme();
  const dark = useComputedColorScheme("light") === "dark";
  const shape = JSON.stringify([series, xLabel, yLabel, time, integerX, xRange, yRange, dark]);

  // Made again when what it draws changes shape; fed new data otherwise.
  useEffect(() => {
    if (!target.current || width === 0) return;
    const axisColor = dark ? theme.colors.dark[1] : theme.colors.gray[7];
    const gridColor = dark ? theme.colors.dark[4] : theme.colors.gray[2];
    const axis = (name: string): uPlot.Axis => ({
      label: name,
      stroke: axisColor,
      grid: { stroke: gridColor, width: 1 },
      ticks: { stroke: gridColor, width: 1 },
    });
    const opts: uPlot.Options = {
      width,
      height,
      scales: { x: xRange ? { time, range: xRange } : { time }, y: yRange ? { range: yRange } : {} },
      axes: [integerX ? { ...axis(xLabel), incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] } : axis(xLabel), axis(yLabel)],
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      series: [
        { label: xLabel },
        ...series.map((s): uPlot.Series => {
          const stroke = theme.colors[s.color]?.[dark ? 4 : 6] ?? s.color;
          return {
            label: s.label,
            stroke,
            width: 2,
            spanGaps: true,
            paths: s.points ? () => null : s.stepped ? uPlot.paths.stepped?.({ align: 1 }) : undefined,
            points: s.points || s.markers ? { show: true, size: s.points ? 8 : 5, fill: stroke, stroke } : { show: false },
          };
        }),
      ],
    };
    plot.current = new uPlot(opts, data, target.current);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape, width > 0]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  useEffect(() => {
    if (width > 0) plot.current?.setSize({ width, height });
  }, [width, height]);

  return (
    <Box ref={ref} w="100%">
      <div ref={target} role="img" aria-label={label} data-testid="chart" />
    </Box>
  );
}
