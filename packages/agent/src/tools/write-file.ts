// write_file: create or overwrite a whole file, atomically.
import { withDiagnostics } from "../diagnostics/attach.js";
import { noteFileWritten } from "../repo-map/freshness.js";
import { editorText } from "./editor-access.js";
import { writeFileAtomicAt } from "./fs/atomic.js";
import { closeQuietly, openParentInside } from "./fs/confined.js";
import { errorResult, exceptionResult, workspaceRoot, writeTargetOrError } from "./fs/errors.js";
import { capForData, snapshotAt } from "./fs/snapshot.js";
import { countLines, fmtInt } from "./fs/text.js";
import { displayPath } from "./paths.js";
import { writeFileSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export type WriteFileArgs = {
  path: string;
  content: string;
};

export const writeFileTool: Tool<WriteFileArgs> = {
  ...writeFileSpec,
  async execute(args: WriteFileArgs, ctx: ToolContext): Promise<ToolResult> {
    if (typeof args.content !== "string") return errorResult("content must be a string");
    const abs = await writeTargetOrError(ctx, args.path, "write");
    if (typeof abs !== "string") return abs;
    const shown = displayPath(ctx, abs);
    if (abs === ctx.workspace) return errorResult("path is the workspace root folder, not a file.");
    let dirFd: number | undefined;
    try {
      const parent = openParentInside(workspaceRoot(ctx), abs, true);
      dirFd = parent.dirFd;
      const before = await snapshotAt(dirFd, parent.name, shown);
      if (before.exists && !before.isFile) {
        return errorResult(`${shown} exists and is not a regular file (it is probably a folder).`);
      }
      // Through the editor when it writes files (its buffer is the file then): the path and the
      // folder passed the checks above first; "before" is its buffer, what the person saw.
      if (ctx.editor?.writeText) {
        if (before.text !== undefined) before.text = (await editorText(ctx, abs, true)) ?? before.text;
        await ctx.editor.writeText(abs, args.content, ctx.signal);
      } else await writeFileAtomicAt(dirFd, parent.name, args.content);
      noteFileWritten(workspaceRoot(ctx), abs);
      const bytes = Buffer.byteLength(args.content);
      const lines = countLines(args.content);
      const unchanged = before.text !== undefined && before.text === args.content;
      const verb = before.exists ? (unchanged ? "Rewrote (content unchanged)" : "Overwrote") : "Created";
      const was =
        before.exists && before.text !== undefined ? `; it had ${fmtInt(countLines(before.text))} lines` : "";
      const data: Record<string, unknown> = {
        path: shown,
        created: !before.exists,
        bytes,
        lines,
      };
      if (before.text !== undefined) data["before"] = before.text;
      else if (before.exists) data["beforeTooLarge"] = true;
      const after = capForData(args.content);
      if (after !== undefined) data["after"] = after;
      const result = {
        output: `${verb} ${shown}: ${fmtInt(bytes)} bytes, ${fmtInt(lines)} lines${was}.`,
        data,
      };
      // A file too large to keep its old text is not checked (nothing to tell new errors from old).
      if (before.exists && before.text === undefined) return result;
      return await withDiagnostics(
        ctx,
        abs,
        shown,
        before.exists ? before.text : undefined,
        args.content,
        result,
      );
    } catch (e) {
      return exceptionResult(e, args.path);
    } finally {
      if (dirFd !== undefined) closeQuietly(dirFd);
    }
  },
};
