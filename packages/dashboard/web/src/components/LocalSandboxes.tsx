// The sandboxes this machine's hands runs used (the data folder's sandbox audit log): backend,
// workspace, age, how they ended, and each one's audit trail on a click.
import { useEffect, useState } from "react";
import type { SandboxTrailEntry } from "../../../src/api-types.js";
import type { LocalSandbox } from "../../../src/local-sandboxes.js";
import { getJson } from "../api.js";
import { fmtMs, fmtTime } from "../format.js";
import { ErrorBox } from "./Problems.js";
import { SandboxTrail } from "./SandboxTrail.js";
import { EmptyRow, ToggleRow } from "./ToggleRow.js";

type Trail = SandboxTrailEntry[];

export function LocalSandboxes() {
  const [data, setData] = useState<{ sandboxes: LocalSandbox[]; unreadable: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<string | undefined>();
  const [trail, setTrail] = useState<Trail | null>(null);
  useEffect(() => {
    getJson<{ sandboxes: LocalSandbox[]; unreadable: number }>("/api/sandboxes/local").then(
      setData,
      (e: Error) => setError(e.message),
    );
  }, []);
  useEffect(() => {
    setTrail(null);
    if (open)
      getJson<Trail>(`/api/sandboxes/local/${encodeURIComponent(open)}`).then(setTrail, (e: Error) =>
        setError(e.message),
      );
  }, [open]);
  if (error) return <ErrorBox message={error} />;
  if (!data) return null;
  return (
    <>
      {data.unreadable ? (
        <div className="warning">{data.unreadable} lines of the sandbox audit log could not be read.</div>
      ) : null}
      <table className="list" data-testid="local-sandboxes">
        <thead>
          <tr>
            <th>session</th>
            <th>backend</th>
            <th>state</th>
            <th>created</th>
            <th>lived</th>
            <th className="num">commands</th>
            <th className="num">failed</th>
            <th className="num">command time</th>
            <th>workspace</th>
          </tr>
        </thead>
        <tbody>
          {data.sandboxes.map((s) => (
            <ToggleRow
              key={s.session}
              id={s.session}
              open={open}
              onToggle={setOpen}
              testId="local-sandbox"
              data={{ "data-session": s.session }}
            >
              <td>{s.kind}</td>
              <td>
                <span className={`status status-${s.state}`}>{s.state}</span>
                {s.endReason ? <span className="muted"> ({s.endReason})</span> : null}
              </td>
              <td>{fmtTime(Date.parse(s.created))}</td>
              <td>{s.ended ? fmtMs(Date.parse(s.ended) - Date.parse(s.created)) : "–"}</td>
              <td className="num">{s.execs}</td>
              <td className="num">{s.failedExecs}</td>
              <td className="num">{fmtMs(s.execMs)}</td>
              <td className="muted ellipsis">{s.workspace}</td>
            </ToggleRow>
          ))}
          {data.sandboxes.length === 0 ? (
            <EmptyRow columns={9}>No sandbox has been used by a run on this machine yet.</EmptyRow>
          ) : null}
        </tbody>
      </table>
      {open && trail ? (
        <SandboxTrail title={`Audit trail of ${open}`} trail={trail} testId="sandbox-trail" />
      ) : null}
    </>
  );
}
