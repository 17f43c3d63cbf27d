// Runs and sessions: every trace in the data folder, newest first, searchable and filterable; the
// list follows the data folder live (a new run appears, a running one updates).
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import type { RunSummary } from "../../../src/api-types.js";
import { getJson } from "../api.js";
import { ErrorBox } from "../components/Problems.js";
import { virtualRowStyle } from "../components/virtualRow.js";
import { fmtCost, fmtMs, fmtTime, fmtTokens } from "../format.js";
import { href } from "../route.js";

const STATUSES = [
  "running",
  "done",
  "error",
  "max_steps",
  "token_budget",
  "aborted",
  "interrupted",
  "unfinished",
  "unreadable",
];

export function RunsPage() {
  const [runs, setRuns] = useState<RunSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState("");
  const [kind, setKind] = useState("");
  const [picked, setPicked] = useState<string[]>([]);

  useEffect(() => {
    let stopped = false;
    const load = () =>
      getJson<RunSummary[]>("/api/runs").then(
        (r) => {
          if (!stopped) {
            setRuns(r);
            setError(null);
          }
        },
        (e: Error) => !stopped && setError(e.message),
      );
    load();
    const live = new EventSource("/api/live");
    live.addEventListener("runs", load);
    return () => {
      stopped = true;
      live.close();
    };
  }, []);

  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    return (runs ?? []).filter(
      (r) =>
        (!status || r.status === status) &&
        (!kind || r.kind === kind) &&
        (!q || `${r.id} ${r.workspace} ${r.firstRequest} ${r.model}`.toLowerCase().includes(q)),
    );
  }, [runs, search, status, kind]);

  const scroller = useRef<HTMLDivElement>(null);
  const rows = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 44,
    overscan: 12,
  });

  const toggle = (id: string) =>
    setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p.slice(-1), id]));

  return (
    <section className="page runs-page">
      <header className="page-head">
        <h1>Runs and sessions</h1>
        <div className="filters">
          <input
            type="search"
            placeholder="Search workspace, request, model, id…"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            aria-label="Search runs"
          />
          <select value={status} onChange={(e) => setStatus(e.target.value)} aria-label="Status">
            <option value="">any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <select value={kind} onChange={(e) => setKind(e.target.value)} aria-label="Kind">
            <option value="">runs and sessions</option>
            <option value="run">one-shot runs</option>
            <option value="session">sessions</option>
            <option value="subagent">sub-agents</option>
          </select>
          {picked.length === 2 ? (
            <a className="button" href={href.compare(picked[0]!, picked[1]!)}>
              Compare the two picked
            </a>
          ) : (
            <span className="hint">pick two to compare</span>
          )}
        </div>
      </header>
      {error ? <ErrorBox message={error} /> : null}
      <div className="grid-head runs-grid">
        <span />
        <span>status</span>
        <span>first request</span>
        <span>workspace</span>
        <span className="num">steps</span>
        <span className="num">tokens</span>
        <span className="num">cost</span>
        <span className="num">duration</span>
        <span>updated</span>
      </div>
      <div className="scroller" ref={scroller} data-testid="runs-list">
        {runs === null ? <p className="muted">Loading…</p> : null}
        {runs !== null && shown.length === 0 ? (
          <p className="muted">
            {runs.length ? "No run matches." : "No runs yet: traces appear here as hands runs."}
          </p>
        ) : null}
        <div style={{ height: rows.getTotalSize(), position: "relative" }}>
          {rows.getVirtualItems().map((v) => {
            const r = shown[v.index]!;
            return (
              <div
                key={r.id}
                className={`row runs-grid${r.parent ? " child-run" : ""}`}
                data-testid="run-row"
                data-run={r.id}
                {...(r.parent ? { "data-parent": r.parent } : {})}
                data-status={r.status}
                style={virtualRowStyle(v)}
              >
                <input
                  type="checkbox"
                  checked={picked.includes(r.id)}
                  onChange={() => toggle(r.id)}
                  aria-label={`pick ${r.id}`}
                />
                <span className={`status status-${r.status}`}>{r.status}</span>
                <a href={href.run(r.id)} className="ellipsis" title={r.firstRequest || r.error}>
                  {r.kind === "session" ? <span className="tag">session · {r.requests}</span> : null}
                  {r.parent ? <span className="tag">↳ sub-agent</span> : null}
                  {r.firstRequest || <em>{r.error ?? "(no request)"}</em>}
                </a>
                <span className="ellipsis muted" title={r.workspace}>
                  {r.workspace}
                </span>
                <span className="num">{r.steps}</span>
                <span className="num" title={`${r.cachedTokens} cached`}>
                  {fmtTokens(r.tokens)}
                </span>
                <span className="num">{fmtCost(r.costUsd)}</span>
                <span className="num">{fmtMs(r.durationMs)}</span>
                <span className="muted">
                  {fmtTime(r.updated)}
                  {r.problems ? (
                    <span className="tag warn" title="lines that could not be read">
                      {r.problems} unreadable
                    </span>
                  ) : null}
                </span>
              </div>
            );
          })}
        </div>
      </div>
      <footer className="muted">
        {shown.length} of {runs?.length ?? 0} shown
      </footer>
    </section>
  );
}
