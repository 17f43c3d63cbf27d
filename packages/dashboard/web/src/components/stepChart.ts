// The axes of every per-step chart: steps along x, context tokens on the left, cost on the right.
import type uPlot from "uplot";

export function stepChartOptions(series: uPlot.Series[]): Omit<uPlot.Options, "width" | "height"> {
  return {
    scales: { x: { time: false }, tokens: { auto: true }, usd: { auto: true } },
    axes: [
      { label: "step", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] },
      { scale: "tokens", label: "context (tokens)", size: 60 },
      { scale: "usd", side: 1, label: "cost so far ($)", size: 60, grid: { show: false } },
    ],
    series: [{ label: "step" }, ...series],
  };
}
