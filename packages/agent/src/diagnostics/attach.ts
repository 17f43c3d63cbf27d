// What write_file and edit_file add to their result after a write: the new errors a language
// server reports for the file (or why there are none to report), in the text and the data.
import { relative, sep } from "node:path";
import type { ToolContext, ToolResult } from "../tools/types.js";
import { formatReport } from "./service.js";

export async function withDiagnostics(
  ctx: ToolContext,
  abs: string,
  shown: string,
  before: string | undefined,
  after: string,
  result: ToolResult,
): Promise<ToolResult> {
  const diagnostics = ctx.diagnostics;
  if (!diagnostics) return result;
  const rel = relative(ctx.workspace, abs).split(sep).join("/");
  if (!diagnostics.handles(rel)) return result;
  const report = await diagnostics.check({ path: rel, before, after, signal: ctx.signal });
  if (!report) return result;
  const text = formatReport(report, shown);
  return {
    ...result,
    output: text ? `${result.output}\n\n${text}` : result.output,
    data: { ...(result.data ?? {}), diagnostics: report },
  };
}
