import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** One series of an hourly chart: bars (counts, on the left axis) or a line (milliseconds, on a right axis). */
export interface HourlySeries {
  label: string;
  color: string;
  values: Array<number | null>;
  kind: 'bars' | 'line';
}

const HEIGHT = 200;
const bars = uPlot.paths.bars!;

/**
 * Counts per hour as a uPlot chart (canvas; docs/dashboard.md says why uPlot): bars side by side per hour, a line on
 * its own millisecond axis. It follows its container's width (a phone's too) and redraws in place when the data
 * changes, so a live update does not rebuild it.
 */
export function HourlyChart({ hours, series }: { hours: number[]; series: HourlySeries[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = series.map((s) => `${s.label}:${s.kind}`).join('|');
  const data = (): uPlot.AlignedData => [hours.map((h) => h / 1000), ...series.map((s) => s.values)];

  useEffect(() => {
    const el = box.current!;
    const barSeries = series.filter((s) => s.kind === 'bars').length;
    let barIndex = 0;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height: HEIGHT,
      cursor: { drag: { x: false, y: false } },
      // half an hour of room at each end, so the first and the last hour's side-by-side bars are not cut off
      scales: { x: { time: true, range: (_u, min, max) => [min - 1800, max + 1800] }, ms: { auto: true } },
      axes: [
        {},
        { label: 'count', size: 44 },
        ...(series.some((s) => s.kind === 'line') ? [{ scale: 'ms', side: 1, label: 'ms', size: 52, grid: { show: false } } as uPlot.Axis] : []),
      ],
      series: [
        {},
        ...series.map((s): uPlot.Series => {
          if (s.kind === 'line') return { label: s.label, stroke: s.color, width: 2, scale: 'ms', spanGaps: true, points: { show: true, size: 5 } };
          // bars of one hour sit side by side: the first to the left of the hour's tick, the next to its right
          const align = barSeries === 1 ? 0 : barIndex++ === 0 ? -1 : 1;
          return { label: s.label, stroke: s.color, fill: s.color, width: 0, paths: bars({ size: [barSeries === 1 ? 0.6 : 0.35, 24], align }), points: { show: false } };
        }),
      ],
    };
    plot.current = new uPlot(opts, data(), el);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(200, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data());
  }, [hours, series]);

  return <div class="hourly-chart" ref={box} />;
}
