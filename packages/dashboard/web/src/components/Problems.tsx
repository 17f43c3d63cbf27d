// What could not be read, said plainly above what could.
import type { TraceProblem } from "@hands/agent";

export function ErrorBox({ message }: { message: string }) {
  return (
    <div className="error" role="alert">
      {message}
    </div>
  );
}

export function Problems({ problems, orphans }: { problems: TraceProblem[]; orphans?: number }) {
  if (!problems.length && !orphans) return null;
  return (
    <details className="warning" data-testid="trace-problems">
      <summary>
        {problems.length} line{problems.length === 1 ? "" : "s"} of this trace could not be shown
        {orphans ? `, ${orphans} events came before any run started` : ""}
      </summary>
      <ul>
        {problems.slice(0, 50).map((p) => (
          <li key={`${p.line}-${p.kind}`}>
            <code>{p.kind}</code> {p.message}
          </li>
        ))}
        {problems.length > 50 ? <li>… and {problems.length - 50} more</li> : null}
      </ul>
    </details>
  );
}
