// Results of `npm run eval` over time: the pass rate of each run of the set on a chart, and a
// grid of tasks × runs (each cell links to that task's trace, to open or compare).
import { useEffect, useMemo, useState } from "react";
import type uPlot from "uplot";
import type { EvalRun } from "../../../src/eval-log.js";
import { getJson } from "../api.js";
import { Chart } from "../components/Chart.js";
import { ErrorBox } from "../components/Problems.js";
import { fmtCost, fmtTime } from "../format.js";
import { href } from "../route.js";

const OPTIONS: Omit<uPlot.Options, "width" | "height"> = {
  scales: { x: { time: true }, pct: { range: [0, 100] } },
  axes: [{}, { scale: "pct", label: "tasks passed (%)", size: 60 }],
  series: [
    {},
    { label: "passed", scale: "pct", stroke: "#16a34a", width: 2, points: { show: true, size: 6 } },
  ],
};

export function EvalsPage() {
  const [data, setData] = useState<{ runs: EvalRun[]; problems: string[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getJson<{ runs: EvalRun[]; problems: string[] }>("/api/evals").then(setData, (e: Error) =>
      setError(e.message),
    );
  }, []);
  const runs = data?.runs ?? [];
  const tasks = useMemo(() => [...new Set(runs.flatMap((r) => r.tasks.map((t) => t.name)))].sort(), [runs]);
  const series = useMemo(
    () =>
      [
        runs.map((r) => r.time / 1000),
        runs.map((r) =>
          r.tasks.length ? (100 * r.tasks.filter((t) => t.passed).length) / r.tasks.length : null,
        ),
      ] as uPlot.AlignedData,
    [runs],
  );
  if (error) return <ErrorBox message={error} />;
  if (!data) return <p className="muted">Loading…</p>;
  return (
    <section className="page evals-page">
      <header className="page-head">
        <h1>Evals</h1>
        <span className="muted">{runs.length} runs of the regression set (npm run eval)</span>
      </header>
      {data.problems.length ? <div className="warning">{data.problems.join("; ")}</div> : null}
      {runs.length === 0 ? (
        <p className="muted">No eval runs recorded yet: npm run eval records each run here.</p>
      ) : (
        <>
          <Chart options={OPTIONS} data={series} label="share of tasks passed per eval run" height={180} />
          <div className="wide">
            <table className="list" data-testid="evals-table">
              <thead>
                <tr>
                  <th>task</th>
                  {runs.map((r) => (
                    <th key={r.time}>
                      {fmtTime(r.time)}
                      <div className="muted">{r.model ?? r.args.join(" ")}</div>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {tasks.map((name) => (
                  <tr key={name} data-testid="eval-task" data-task={name}>
                    <th>{name}</th>
                    {runs.map((r) => {
                      const t = r.tasks.find((x) => x.name === name);
                      if (!t)
                        return (
                          <td key={r.time} className="muted">
                            –
                          </td>
                        );
                      return (
                        <td
                          key={r.time}
                          className={t.passed ? "pass" : "fail"}
                          title={t.failures.join("\n")}
                          data-testid="eval-cell"
                          data-passed={t.passed}
                        >
                          {t.runId ? (
                            <a href={href.run(t.runId)}>{t.passed ? "pass" : "FAIL"}</a>
                          ) : t.passed ? (
                            "pass"
                          ) : (
                            "FAIL"
                          )}
                          <div className="muted">
                            {t.steps ?? "?"} steps · {t.seconds.toFixed(1)} s
                            {t.costUsd ? ` · ${fmtCost(t.costUsd)}` : ""}
                          </div>
                          {t.passed ? null : <div className="fail-why">{t.failures[0]}</div>}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
