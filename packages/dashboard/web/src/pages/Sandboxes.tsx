// The sandboxes of a running hands serve (its management API, as any E2B client sees it): state,
// tenant, backend, template, age, time left, CPU / memory / processes now (refreshed), the
// service's gauges; each one's audit trail on a click; kill one.
import { useCallback, useEffect, useState } from "react";
import type { SandboxesPayload, SandboxInfo, SandboxTrailEntry } from "../../../src/api-types.js";
import { getJson, post } from "../api.js";
import { LocalSandboxes } from "../components/LocalSandboxes.js";
import { ErrorBox } from "../components/Problems.js";
import { SandboxTrail } from "../components/SandboxTrail.js";
import { EmptyRow, ToggleRow } from "../components/ToggleRow.js";
import { fmtBytes, fmtMs } from "../format.js";

function Usage({ s }: { s: SandboxInfo }) {
  if (s.usageError)
    return (
      <td colSpan={3} className="muted" title={s.usageError}>
        figures unavailable
      </td>
    );
  const u = s.usage;
  if (!u)
    return (
      <td colSpan={3} className="muted">
        –
      </td>
    );
  return (
    <>
      <td className="num" data-testid="sandbox-cpu">
        {u.cpuUsedPct.toFixed(1)}% of {s.cpuCount}
      </td>
      <td className="num" data-testid="sandbox-memory">
        {fmtBytes(u.memUsed)} / {fmtBytes(u.memTotal)}
      </td>
      <td className="num" data-testid="sandbox-pids">
        {u.pids ?? "–"}
      </td>
    </>
  );
}

export function SandboxesPage() {
  const [data, setData] = useState<SandboxesPayload | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [now, setNow] = useState(Date.now());
  const [open, setOpen] = useState<string | undefined>();
  const [trail, setTrail] = useState<SandboxTrailEntry[] | null>(null);
  const load = useCallback(() => {
    getJson<SandboxesPayload>("/api/sandboxes").then(
      (d) => {
        setData(d);
        setNow(Date.now());
      },
      (e: Error) => setError(e.message),
    );
  }, []);
  useEffect(() => {
    load();
    const t = setInterval(load, 3000);
    return () => clearInterval(t);
  }, [load]);
  // The open sandbox's trail refreshes as the list does (new commands show up).
  useEffect(() => {
    setTrail(null);
    if (!open) return;
    const fetchTrail = () =>
      getJson<SandboxTrailEntry[]>(`/api/sandboxes/${encodeURIComponent(open)}/trail`).then(
        setTrail,
        (e: Error) => setError(e.message),
      );
    fetchTrail();
    const t = setInterval(fetchTrail, 3000);
    return () => clearInterval(t);
  }, [open]);
  const kill = (id: string) => {
    setError(null);
    post(`/api/sandboxes/${encodeURIComponent(id)}/kill`).then(load, (e: Error) => setError(e.message));
  };
  return (
    <section className="page sandboxes-page">
      <header className="page-head">
        <h1>Sandboxes</h1>
        <span className="muted">{data?.service ? `hands serve at ${data.service}` : ""}</span>
      </header>
      {error ? <ErrorBox message={error} /> : null}
      {data?.error ? <ErrorBox message={data.error} /> : null}
      {data ? (
        <>
          <table className="list" data-testid="sandboxes-table">
            <thead>
              <tr>
                <th>sandbox</th>
                <th>state</th>
                <th>tenant</th>
                <th>backend</th>
                <th>template</th>
                <th>age</th>
                <th>time left</th>
                <th className="num">CPU</th>
                <th className="num">memory</th>
                <th className="num">PIDs</th>
                <th>metadata</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {data.sandboxes.map((s) => (
                <ToggleRow
                  key={s.id}
                  id={s.id}
                  open={open}
                  onToggle={setOpen}
                  testId="sandbox-row"
                  data={{ "data-sandbox": s.id }}
                  title="audit trail"
                >
                  <td>
                    <span className={`status status-${s.state}`}>{s.state}</span>
                  </td>
                  <td data-testid="sandbox-tenant">{s.tenant ?? "–"}</td>
                  <td data-testid="sandbox-backend">{s.backend ?? "–"}</td>
                  <td>{s.template}</td>
                  <td>{fmtMs(now - Date.parse(s.startedAt))}</td>
                  <td data-testid="sandbox-ttl">{fmtMs(Math.max(0, Date.parse(s.endAt) - now))}</td>
                  <Usage s={s} />
                  <td className="muted">
                    {Object.entries(s.metadata)
                      .map(([k, v]) => `${k}=${v}`)
                      .join(" ")}
                  </td>
                  <td>
                    <button type="button" className="danger" onClick={() => kill(s.id)}>
                      kill
                    </button>
                  </td>
                </ToggleRow>
              ))}
              {data.sandboxes.length === 0 ? <EmptyRow columns={12}>No live sandboxes.</EmptyRow> : null}
            </tbody>
          </table>
          {open && trail ? (
            <SandboxTrail title={`Audit trail of ${open}`} trail={trail} testId="serve-sandbox-trail" />
          ) : null}
          {Object.keys(data.metrics).length ? (
            <>
              <h2>The service's metrics</h2>
              <table className="small" data-testid="serve-metrics">
                <tbody>
                  {Object.entries(data.metrics)
                    .filter(([k]) => !k.includes("_bucket"))
                    .map(([k, v]) => (
                      <tr key={k}>
                        <td className="mono">{k}</td>
                        <td className="num">{v}</td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </>
          ) : null}
        </>
      ) : (
        <p className="muted">Loading…</p>
      )}
      <h2>Sandboxes of this machine's runs</h2>
      <LocalSandboxes />
    </section>
  );
}
