// uPlot in a React component: made once per set of options, fed new data as it changes, sized to
// its box.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartProps {
  options: Omit<uPlot.Options, "width" | "height">;
  data: uPlot.AlignedData;
  height?: number;
  label: string;
}

export function Chart({ options, data, height = 220, label }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const p = new uPlot({ ...options, width: Math.max(200, el.clientWidth), height }, latest.current, el);
    plot.current = p;
    const ro = new ResizeObserver(() => p.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      p.destroy();
      plot.current = null;
    };
  }, [options, height]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return <div className="chart" ref={box} role="img" aria-label={label} />;
}
