// A chunk filter as an SQL condition on the chunks table (optionally through an alias).
import type { ChunkFilter } from "./types.js";

export function where(filter: ChunkFilter, alias = ""): { sql: string; params: unknown[] } {
  const p = alias ? `${alias}.` : "";
  const clauses: string[] = [];
  const params: unknown[] = [];
  const inList = (col: string, values: readonly string[]) => {
    clauses.push(`${p}${col} IN (${values.map(() => "?").join(",")})`);
    params.push(...values);
  };
  if (filter.scope !== undefined)
    inList("scope", Array.isArray(filter.scope) ? filter.scope : [filter.scope]);
  if (filter.types?.length) inList("type", filter.types);
  if (filter.layers?.length) inList("layer", filter.layers);
  if (filter.minImportance !== undefined) {
    clauses.push(`${p}importance >= ?`);
    params.push(filter.minImportance);
  }
  if (filter.goal !== undefined) {
    clauses.push(`EXISTS (SELECT 1 FROM json_each(${p}goals) WHERE value = ?)`);
    params.push(filter.goal);
  }
  if (filter.uncompressedOnly) clauses.push(`${p}parent IS NULL`);
  if (filter.stepIn) {
    clauses.push(`${p}step IN (SELECT value FROM json_each(?))`);
    params.push(JSON.stringify(filter.stepIn));
  }
  if (filter.steps) {
    clauses.push(`${p}step BETWEEN ? AND ?`);
    params.push(filter.steps[0], filter.steps[1]);
  }
  return { sql: clauses.length ? clauses.join(" AND ") : "1", params };
}
