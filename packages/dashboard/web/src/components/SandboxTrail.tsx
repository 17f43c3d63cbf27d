// A sandbox's audit trail as a table: when, what, and the event's own fields (the local runs'
// sandbox log and hands serve's trail have the same shape).
import type { SandboxTrailEntry } from "../../../src/api-types.js";
import { fmtTime } from "../format.js";

function detail(r: SandboxTrailEntry): string {
  const { time: _t, event: _e, session: _s, ...rest } = r;
  return Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
}

export function SandboxTrail(p: { title: string; trail: SandboxTrailEntry[]; testId: string }) {
  return (
    <>
      <h3>{p.title}</h3>
      <table className="small" data-testid={p.testId}>
        <tbody>
          {p.trail.map((r, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the log's order is its identity
            <tr key={i}>
              <td>{fmtTime(Date.parse(r.time))}</td>
              <td>{r.event}</td>
              <td className="mono">{detail(r)}</td>
            </tr>
          ))}
          {p.trail.length === 0 ? (
            <tr>
              <td colSpan={3} className="muted">
                Nothing recorded yet.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </>
  );
}
