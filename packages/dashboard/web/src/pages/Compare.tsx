// Two runs side by side (say, the same eval task before and after a change): their totals, their
// context and cost curves on one chart, and their steps row by row.
import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef } from "react";
import type uPlot from "uplot";
import { type StepView, stepSeries, type Timeline, totals } from "../../../src/timeline.js";
import { Chart } from "../components/Chart.js";
import { ErrorBox } from "../components/Problems.js";
import { stepChartOptions } from "../components/stepChart.js";
import { virtualRowStyle } from "../components/virtualRow.js";
import { fmtCost, fmtMs, fmtTokens } from "../format.js";
import { useTrace } from "../hooks/useTrace.js";
import { href } from "../route.js";

const OPTIONS = stepChartOptions([
  { label: "A context", scale: "tokens", stroke: "#2563eb", width: 2 },
  { label: "B context", scale: "tokens", stroke: "#16a34a", width: 2 },
  { label: "A cost", scale: "usd", stroke: "#2563eb", dash: [4, 4] },
  { label: "B cost", scale: "usd", stroke: "#16a34a", dash: [4, 4] },
]);

function facts(t: Timeline | undefined) {
  const run = t?.runs[t.runs.length - 1];
  if (!t || !run) return undefined;
  const x = totals(run);
  const tools = new Map<string, number>();
  for (const s of run.steps) for (const c of s.tools) tools.set(c.name, (tools.get(c.name) ?? 0) + 1);
  return {
    run,
    rows: [
      ["task", run.task],
      ["status", run.result?.status ?? "running"],
      ["model", run.model],
      ["steps", String(run.result?.steps ?? run.steps.length)],
      ["tokens in / out", `${fmtTokens(x.input)} / ${fmtTokens(x.output)}`],
      ["cached", fmtTokens(x.cached)],
      ["cost", fmtCost(x.costUsd)],
      ["duration", fmtMs(run.result?.durationMs ?? run.updated - run.start)],
      ["tool calls", [...tools].map(([n, c]) => `${n} ×${c}`).join(", ") || "none"],
    ] as [string, string][],
  };
}

const line = (s: StepView | undefined) =>
  s
    ? s.tools.map((t) => t.name).join(", ") || s.response?.content.replace(/\s+/g, " ").slice(0, 100) || "…"
    : "";

export function ComparePage({ a, b }: { a: string; b: string }) {
  const ta = useTrace(a);
  const tb = useTrace(b);
  const fa = facts(ta.timeline);
  const fb = facts(tb.timeline);
  const stepsA = fa?.run.steps ?? [];
  const stepsB = fb?.run.steps ?? [];
  // biome-ignore lint/correctness/useExhaustiveDependencies: the timelines mutate in place; their versions say when
  const data = useMemo(() => {
    const sa = stepSeries(stepsA);
    const sb = stepSeries(stepsB);
    const n = Math.max(sa.x.length, sb.x.length);
    const x = Array.from({ length: n }, (_, i) => i + 1);
    const pad = <T,>(v: T[]) => x.map((_, i) => v[i] ?? null);
    return [x, pad(sa.context), pad(sb.context), pad(sa.cost), pad(sb.cost)] as uPlot.AlignedData;
  }, [ta.version, tb.version, stepsA, stepsB]);
  const scroller = useRef<HTMLDivElement>(null);
  const n = Math.max(stepsA.length, stepsB.length);
  const virtual = useVirtualizer({
    count: n,
    getScrollElement: () => scroller.current,
    estimateSize: () => 30,
    overscan: 10,
  });

  if (ta.error || tb.error) return <ErrorBox message={ta.error ?? tb.error ?? ""} />;
  return (
    <section className="page compare-page">
      <header className="page-head">
        <h1>
          <a href={href.runs()}>Runs</a> / compare
        </h1>
      </header>
      <table className="compare" data-testid="compare-table">
        <thead>
          <tr>
            <th />
            <th>
              A: <a href={href.run(a)}>{a}</a>
            </th>
            <th>
              B: <a href={href.run(b)}>{b}</a>
            </th>
          </tr>
        </thead>
        <tbody>
          {(fa?.rows ?? fb?.rows ?? []).map(([k], i) => (
            <tr key={k}>
              <th>{k}</th>
              <td>{fa?.rows[i]?.[1] ?? "…"}</td>
              <td>{fb?.rows[i]?.[1] ?? "…"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Chart options={OPTIONS} data={data} label="context and cost per step, both runs" height={200} />
      <div className="scroller" ref={scroller}>
        <div style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {virtual.getVirtualItems().map((v) => (
            <div key={v.key} className="row compare-grid" style={virtualRowStyle(v)}>
              <span className="step-no">#{v.index + 1}</span>
              <span className="ellipsis">{line(stepsA[v.index])}</span>
              <span className="ellipsis">{line(stepsB[v.index])}</span>
            </div>
          ))}
        </div>
      </div>
    </section>
  );
}
