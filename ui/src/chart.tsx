// A time series chart (uPlot) that follows its container's width and the
// colour scheme.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Series {
  label: string;
  /** A CSS custom property holding the colour, such as --c-entitlement. */
  color: string;
  dash?: number[];
}

function css(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

export function TimeChart({
  title,
  series,
  data,
  format,
  height = 220,
}: {
  title: string;
  series: Series[];
  /** x (unix seconds) first, then one array per series; null leaves a gap. */
  data: (number | null)[][];
  format: (v: number) => string;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const fmt = useRef(format);
  fmt.current = format;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const make = () => {
      plot.current?.destroy();
      const axis = { stroke: css('--fg-muted'), grid: { stroke: css('--grid'), width: 1 }, ticks: { stroke: css('--grid') } };
      plot.current = new uPlot(
        {
          width: Math.max(240, el.clientWidth),
          height,
          series: [
            {},
            ...series.map((s) => ({
              label: s.label,
              stroke: css(s.color),
              width: 2,
              dash: s.dash,
              points: { show: false },
              value: (_: uPlot, v: number | null) => (v === null ? '–' : fmt.current(v)),
            })),
          ],
          axes: [axis, { ...axis, size: 70, values: (_: uPlot, ticks: number[]) => ticks.map((v) => fmt.current(v)) }],
          scales: { x: { time: true }, y: { range: (_u: uPlot, _min: number, max: number) => [0, max > 0 ? max * 1.1 : 1] } },
          legend: { live: true },
          cursor: { drag: { x: false, y: false } },
        },
        data as uPlot.AlignedData,
        el,
      );
    };
    make();
    const ro = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(240, el.clientWidth), height }));
    ro.observe(el);
    const mq = window.matchMedia('(prefers-color-scheme: dark)');
    mq.addEventListener('change', make);
    return () => {
      ro.disconnect();
      mq.removeEventListener('change', make);
      plot.current?.destroy();
      plot.current = null;
    };
  }, [series.map((s) => s.label).join(), height]);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData);
  }, [data]);

  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: chart over time; the table beside it has the latest figures`} data-points={data[0]?.length ?? 0} />
    </figure>
  );
}
