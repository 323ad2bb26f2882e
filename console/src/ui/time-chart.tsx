import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  color: string;
}

interface TimeChartProps {
  title: string;
  /** Seconds since the epoch, one per point. */
  times: number[];
  series: ChartSeries[];
  format?: (value: number) => string;
  /** A fixed value range (rates: 0..1); otherwise the data's. */
  range?: [number, number];
  height?: number;
}

/**
 * A time-series line chart (uPlot, bundled: canvas drawing, ~50 KB). It takes its container's width and
 * follows it as the window resizes. The figure's label gives screen readers the latest values.
 */
export function TimeChart({ title, times, series, format = String, range, height = 200 }: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const chart = new uPlot(
      {
        width: Math.max(240, element.clientWidth),
        height,
        legend: { show: true },
        scales: { x: { time: true }, y: range ? { range } : {} },
        axes: [{}, { values: (_chart, ticks) => ticks.map(format), size: 84 }],
        series: [
          {},
          ...series.map((line) => ({
            label: line.label,
            stroke: line.color,
            width: 2,
            points: { show: times.length < 40 },
            value: (_chart: uPlot, value: number | null) => (value === null ? "—" : format(value)),
          })),
        ],
      },
      [times, ...series.map((line) => line.values)] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(240, element.clientWidth), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [times, series, height, format, range]);
  const latest = series
    .map((line) => {
      const value = line.values.at(-1);
      return `${line.label}: ${value === null || value === undefined ? "no data" : format(value)}`;
    })
    .join(", ");
  return (
    <figure class="chart card">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title} over time; latest ${latest}`} />
    </figure>
  );
}
