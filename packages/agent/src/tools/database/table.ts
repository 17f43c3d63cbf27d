// A query's rows as the model reads them: a pipe table, each cell on one line and clipped, with
// how many rows there are — or that there are more than were read, when the cap stopped it.

export const CELL_MAX_CHARS = 200;

export interface QueryTable {
  columns: string[];
  /** Each row as an array, in column order, values already made plain (cellText). */
  rows: string[][];
  /** True when more rows followed the ones read (the cap stopped the read). */
  more: boolean;
  /** Rows a write changed. */
  changed?: number;
  ms: number;
}

/** One value as table text: NULL, numbers and strings as they are, blobs by their size. */
export function cellText(value: unknown): string {
  let text: string;
  if (value === null || value === undefined) text = "NULL";
  else if (typeof value === "bigint" || typeof value === "number" || typeof value === "boolean")
    text = String(value);
  else if (value instanceof Uint8Array) text = `<blob ${value.length} bytes>`;
  else if (value instanceof Date) text = Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  else if (typeof value === "object")
    text = JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v));
  else text = String(value);
  text = text.replace(/\r?\n|\r/g, "\\n").replace(/\|/g, "\\|");
  return text.length > CELL_MAX_CHARS ? `${text.slice(0, CELL_MAX_CHARS - 1)}…` : text;
}

export function formatTable(t: QueryTable, maxRows: number): string {
  if (t.columns.length === 0)
    return t.changed !== undefined
      ? `OK: ${t.changed} row(s) changed (${t.ms} ms)`
      : `OK: no rows returned (${t.ms} ms)`;
  const lines = [`| ${t.columns.map(cellText).join(" | ")} |`, `|${t.columns.map(() => " --- ").join("|")}|`];
  for (const row of t.rows) lines.push(`| ${row.join(" | ")} |`);
  const count = t.more
    ? `${t.rows.length} rows shown; more rows follow (stopped at the cap of ${maxRows}: add a LIMIT, a WHERE or an aggregate)`
    : `${t.rows.length} row${t.rows.length === 1 ? "" : "s"}`;
  return `${lines.join("\n")}\n(${count}; ${t.ms} ms)`;
}
