// Plain-text tables for listings: each column as wide as its widest cell, so columns line up
// whatever the data (long ids, four-digit step counts, dollars).

export interface Column {
  header: string;
  /** Numbers read best right-aligned. */
  align?: "left" | "right";
}

/** The rows under a header line, two spaces between columns; the last column is not padded. */
export function formatTable(columns: Column[], rows: string[][]): string {
  const widths = columns.map((c, i) => Math.max(width(c.header), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: string[]) =>
    columns
      .map((c, i) => {
        const cell = cells[i] ?? "";
        if (i === columns.length - 1 && c.align !== "right") return cell;
        const pad = " ".repeat(widths[i]! - width(cell));
        return c.align === "right" ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)].join("\n");
}

/** Columns a cell takes in a terminal: code points, wide (East Asian) characters as two. */
function width(s: string): number {
  let n = 0;
  for (const ch of s)
    n +=
      /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{1f300}-\u{1faff}\u{20000}-\u{3fffd}]/u.test(
        ch,
      )
        ? 2
        : 1;
  return n;
}
