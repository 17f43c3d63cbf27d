// The sandboxes of a running hands serve (its management API, as any E2B client sees it): state,
// template, age, time left, CPU and memory, the service's gauges; kill one.
import { useCallback, useEffect, useState } from "react";
import type { SandboxesPayload } from "../../../src/api-types.js";
import { getJson, post } from "../api.js";
import { LocalSandboxes } from "../components/LocalSandboxes.js";
import { ErrorBox } from "../components/Problems.js";
import { fmtMs } from "../format.js";

export function SandboxesPage() {
  const [data, setData] = useState<SandboxesPayload | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [now, setNow] = useState(Date.now());
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
                <th>template</th>
                <th>age</th>
                <th>time left</th>
                <th className="num">CPUs</th>
                <th className="num">memory</th>
                <th>metadata</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {data.sandboxes.map((s) => (
                <tr key={s.id} data-testid="sandbox-row" data-sandbox={s.id}>
                  <td className="mono">{s.id}</td>
                  <td>
                    <span className={`status status-${s.state}`}>{s.state}</span>
                  </td>
                  <td>{s.template}</td>
                  <td>{fmtMs(now - Date.parse(s.startedAt))}</td>
                  <td>{fmtMs(Math.max(0, Date.parse(s.endAt) - now))}</td>
                  <td className="num">{s.cpuCount}</td>
                  <td className="num">{s.memoryMB} MB</td>
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
                </tr>
              ))}
              {data.sandboxes.length === 0 ? (
                <tr>
                  <td colSpan={9} className="muted">
                    No live sandboxes.
                  </td>
                </tr>
              ) : null}
            </tbody>
          </table>
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
