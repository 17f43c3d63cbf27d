// A table row whose first cell opens and closes something about it (a sandbox's audit trail),
// and the row a table shows when it has none: shared by the sandboxes tables.
import type { ReactNode } from "react";

export function ToggleRow({
  id,
  open,
  onToggle,
  testId,
  data,
  title,
  children,
}: {
  id: string;
  /** The id of the row now open, if any. */
  open: string | undefined;
  onToggle: (id: string | undefined) => void;
  testId: string;
  /** data-* attributes that name the row for tests and styles, e.g. { "data-sandbox": id }. */
  data: Record<`data-${string}`, string>;
  title?: string;
  /** The row's other cells. */
  children: ReactNode;
}) {
  return (
    <tr data-testid={testId} {...data} className={open === id ? "picked" : ""}>
      <td>
        <button
          type="button"
          className="link mono"
          {...(title ? { title } : {})}
          onClick={() => onToggle(open === id ? undefined : id)}
        >
          {id}
        </button>
      </td>
      {children}
    </tr>
  );
}

export function EmptyRow({ columns, children }: { columns: number; children: ReactNode }) {
  return (
    <tr>
      <td colSpan={columns} className="muted">
        {children}
      </td>
    </tr>
  );
}
