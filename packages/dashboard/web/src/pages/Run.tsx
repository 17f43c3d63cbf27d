// One run: what it was asked and how it ended, a chart of context size and cost per step, and a
// virtualised timeline of its steps (a 2,000-step trace renders only the rows on screen).
import type { TraceLiveness } from "@hands/agent";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef, useState } from "react";
import type uPlot from "uplot";
import type { RunView, StepView } from "../../../src/timeline.js";
import { costByModel, runState, stepSeries, totals } from "../../../src/timeline.js";
import { Chart } from "../components/Chart.js";
import { ErrorBox, Problems } from "../components/Problems.js";
import { StepDetail } from "../components/StepDetail.js";
import { stepChartOptions } from "../components/stepChart.js";
import { virtualRowStyle } from "../components/virtualRow.js";
import { fmtCost, fmtMs, fmtTime, fmtTokens } from "../format.js";
import { useTrace } from "../hooks/useTrace.js";
import { href } from "../route.js";

type Row =
  | { kind: "run"; run: RunView }
  | { kind: "step"; step: StepView; index: number }
  | { kind: "end"; run: RunView };

const CHART_OPTIONS = stepChartOptions([
  { label: "context tokens", scale: "tokens", stroke: "#2563eb", width: 2, points: { show: false } },
  {
    label: "cost so far",
    scale: "usd",
    stroke: "#d97706",
    width: 2,
    points: { show: false },
    value: (_u, v) => (v == null ? "–" : `$${v.toFixed(4)}`),
  },
]);

function stepSummary(s: StepView, ended: boolean): string {
  const calls = s.tools.map((t) => t.name);
  if (calls.length) return calls.join(", ");
  if (s.response?.content) return s.response.content.replace(/\s+/g, " ").slice(0, 160);
  if (s.response) return "(empty response)";
  return ended ? "no response (the run ended first)" : "waiting for the model…";
}

export function RunHeader({ run, liveness }: { run: RunView; liveness: TraceLiveness }) {
  const t = totals(run);
  const state = runState(run, liveness);
  return (
    <div className="run-head" data-testid="run-head">
      <div className="run-task">{run.task}</div>
      <div className="run-facts">
        <span className={`status status-${state}`} data-testid="run-status">
          {state}
        </span>
        <span>{run.model}</span>
        <span>{run.result?.steps ?? run.steps.length} steps</span>
        <span>
          {fmtTokens(t.input)} in · {fmtTokens(t.output)} out · {fmtTokens(t.cached)} cached
        </span>
        <span>{fmtCost(t.costUsd)}</span>
        <span>{fmtMs(run.result?.durationMs ?? run.updated - run.start)}</span>
        <span className="muted">{fmtTime(run.start)}</span>
        <span className="muted ellipsis">{run.workspace}</span>
      </div>
      {run.plan ? <div className="muted">plan: {run.plan.join(" · ")}</div> : null}
      <CostSplit run={run} />
    </div>
  );
}

/** Cost by model and role, when the run used more than one model (routing, sub-agents). */
function CostSplit({ run }: { run: RunView }) {
  const shares = costByModel(run);
  if (shares.length < 2 && !shares.some((s) => s.role)) return null;
  return (
    <table className="cost-split" data-testid="cost-split">
      <thead>
        <tr>
          <th>model</th>
          <th>role</th>
          <th className="num">steps</th>
          <th className="num">tokens in / out</th>
          <th className="num">cost</th>
        </tr>
      </thead>
      <tbody>
        {shares.map((s) => (
          <tr key={`${s.model} ${s.role}`} data-model={s.model} data-role={s.role}>
            <td>{s.model}</td>
            <td>{s.role || "—"}</td>
            <td className="num">{s.steps}</td>
            <td className="num">
              {fmtTokens(s.input)} / {fmtTokens(s.output)}
            </td>
            <td className="num">{fmtCost(s.costUsd)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function RunPage({ id }: { id: string }) {
  const trace = useTrace(id);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const tl = trace.timeline;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the timeline mutates in place; its version says when
  const rows = useMemo<Row[]>(() => {
    if (!tl) return [];
    const out: Row[] = [];
    let index = 0;
    for (const run of tl.runs) {
      if (tl.runs.length > 1) out.push({ kind: "run", run });
      for (const step of run.steps) out.push({ kind: "step", step, index: index++ });
      if (run.result) out.push({ kind: "end", run });
    }
    return out;
  }, [tl, trace.version]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: as above
  const series = useMemo(() => {
    const s = stepSeries(tl ? tl.steps() : []);
    return [s.x, s.context, s.cost] as uPlot.AlignedData;
  }, [tl, trace.version]);

  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 40,
    overscan: 10,
    getItemKey: (i) => {
      const r = rows[i]!;
      return r.kind === "step" ? `s${r.step.run}/${r.step.step}` : `${r.kind}${r.run.index}`;
    },
  });

  if (trace.error) return <ErrorBox message={trace.error} />;
  if (!tl) return <p className="muted">Loading…</p>;
  const last = tl.runs[tl.runs.length - 1];
  const toggle = (key: string) =>
    setOpen((o) => {
      const n = new Set(o);
      if (n.has(key)) n.delete(key);
      else n.add(key);
      return n;
    });

  return (
    <section className="page run-page">
      <header className="page-head">
        <h1>
          <a href={href.runs()}>Runs</a> / <span className="mono">{id}</span>
        </h1>
        <span className={`live ${trace.live ? "on" : ""}`} data-testid="live-indicator">
          {trace.live ? "following live" : "not following"}
        </span>
      </header>
      <Problems problems={trace.problems} orphans={tl.orphans} />
      {last ? (
        <RunHeader run={last} liveness={trace.liveness} />
      ) : (
        <ErrorBox message="This trace has no run in it (no run_start event): not a Hands trace, or cut at its head." />
      )}
      {tl.runs.length > 1 ? (
        <div className="muted">
          A session: {tl.runs.length} requests in this trace; the header shows the last.
        </div>
      ) : null}
      <Chart options={CHART_OPTIONS} data={series} label="context size and cost per step" height={200} />
      <div className="scroller timeline" ref={scroller} data-testid="timeline">
        <div style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {virtual.getVirtualItems().map((v) => {
            const r = rows[v.index]!;
            const key = String(v.key);
            return (
              <div
                key={key}
                data-index={v.index}
                ref={virtual.measureElement}
                style={virtualRowStyle(v, true)}
              >
                {r.kind === "run" ? (
                  <div className="run-divider">
                    request {r.run.index + 1}: {r.run.task}
                  </div>
                ) : r.kind === "end" ? (
                  <div className={`run-end status-${r.run.result!.status}`} data-testid="run-result">
                    {r.run.result!.status}
                    {r.run.result!.reason ? `: ${r.run.result!.reason}` : ""} · {r.run.result!.steps} steps ·{" "}
                    {fmtMs(r.run.result!.durationMs)}
                    {r.run.result!.answer ? <pre className="content">{r.run.result!.answer}</pre> : null}
                  </div>
                ) : (
                  <div
                    className={`step ${open.has(key) ? "open" : ""}`}
                    data-testid="step-row"
                    data-step={r.step.step}
                  >
                    <button
                      type="button"
                      className="step-line"
                      onClick={() => toggle(key)}
                      aria-expanded={open.has(key)}
                    >
                      <span className="step-no">#{r.index + 1}</span>
                      <span className="ellipsis">
                        {stepSummary(r.step, Boolean(tl.runs[r.step.run]?.result))}
                      </span>
                      <span className="muted num">
                        {r.step.response ? `${fmtTokens(r.step.response.usage.inputTokens)} ctx` : ""}
                      </span>
                      <span className="muted num">
                        {r.step.response ? fmtMs(r.step.response.durationMs) : "…"}
                      </span>
                      <span className="badges">
                        {r.step.retries.length ? (
                          <span className="tag warn">{r.step.retries.length} retries</span>
                        ) : null}
                        {r.step.corrections.length ? <span className="tag warn">correction</span> : null}
                        {r.step.tools.some((t) => t.end?.isError) ? (
                          <span className="tag warn">tool error</span>
                        ) : null}
                        {r.step.tools.some((t) => t.approval && !t.approval.allow) ? (
                          <span className="tag warn">denied</span>
                        ) : null}
                        {r.step.memory.length ? (
                          <span className="tag">{r.step.memory.length} memory</span>
                        ) : null}
                      </span>
                    </button>
                    {open.has(key) ? <StepDetail runId={id} step={r.step} /> : null}
                  </div>
                )}
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
