// Plain-text tables for listings: each column as wide as its widest cell, so columns line up
// whatever the data (long ids, four-digit step counts, dollars).
import { displayWidth as width } from "./render.js";

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
