import { lstatSync } from "node:fs";
import picomatch from "picomatch";
import { closeQuietly, viaFd } from "./fs/confined.js";
import {
  errorResult,
  exceptionResult,
  openOrError,
  readableRoots,
  resolveOrError,
  workspaceRoot,
} from "./fs/errors.js";
import { fmtInt } from "./fs/text.js";
import { walkFiles } from "./fs/walk.js";
import { displayPath } from "./paths.js";
import { GLOB_MAX_RESULTS, globSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export { GLOB_MAX_RESULTS };

export type GlobArgs = {
  pattern: string;
  path?: string;
};

/** Files examined at most (protects against enormous trees). */
export const GLOB_MAX_SCANNED = 200_000;

/** True when the pattern explicitly names node_modules (then it is searched). */
export function mentionsNodeModules(pattern: string): boolean {
  return pattern.split("/").some((seg) => seg.includes("node_modules"));
}

export const globTool: Tool<GlobArgs> = {
  ...globSpec,
  async execute(args: GlobArgs, ctx: ToolContext): Promise<ToolResult> {
    const pattern = typeof args.pattern === "string" ? args.pattern.trim() : "";
    if (pattern === "") return errorResult("pattern must be a non-empty glob pattern such as **/*.ts");
    if (pattern.startsWith("/")) {
      return errorResult(
        "pattern must be relative (it is matched against paths relative to `path`); put the folder in `path` instead.",
      );
    }
    const userPath = args.path ?? ".";
    const base = await resolveOrError(ctx, userPath);
    if (typeof base !== "string") return base;
    try {
      const opened = openOrError(ctx, userPath, base);
      if (opened instanceof Promise) return opened;
      closeQuietly(opened.fd); // the walk opens the folder again, the same safe way
      if (!opened.stats.isDirectory())
        return errorResult(`${displayPath(ctx, base)} is a file, not a folder.`);

      const clean = pattern.replace(/^\.\//, "");
      let isMatch: (p: string) => boolean;
      try {
        isMatch = picomatch(clean, { dot: true });
      } catch (e) {
        return errorResult(`invalid glob pattern ${JSON.stringify(pattern)}: ${(e as Error).message}`);
      }
      // Only walk folders that can contain matches: below the pattern's static prefix, and no
      // deeper than its number of segments when it has no "**".
      const staticBase = picomatch.scan(clean).base;
      const maxSegments = clean.includes("**") || clean.includes("{") ? Infinity : clean.split("/").length;
      const enterDir = (rel: string) =>
        rel.split("/").length < maxSegments &&
        (staticBase === "" ||
          staticBase.startsWith(`${rel}/`) ||
          rel === staticBase ||
          rel.startsWith(`${staticBase}/`));

      const matches: { path: string; mtime: number }[] = [];
      let scanned = 0;
      let total = 0;
      let stoppedEarly = false;
      for await (const f of walkFiles({
        workspace: workspaceRoot(ctx),
        roots: readableRoots(ctx),
        base,
        includeNodeModules: mentionsNodeModules(clean),
        signal: ctx.signal,
        enterDir,
      })) {
        if (++scanned > GLOB_MAX_SCANNED) {
          stoppedEarly = true;
          break;
        }
        if (!isMatch(f.rel)) continue;
        total++;
        let mtime = 0;
        try {
          mtime = lstatSync(viaFd(f.dirFd, f.name)).mtimeMs;
        } catch {
          mtime = 0;
        }
        matches.push({ path: displayPath(ctx, f.abs), mtime });
      }
      if (ctx.signal.aborted) return errorResult("glob was aborted.");
      matches.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      const shown = matches.slice(0, GLOB_MAX_RESULTS);
      const where = displayPath(ctx, base);
      if (shown.length === 0) {
        let msg = `No files match ${JSON.stringify(pattern)} in ${where === "." ? "the workspace" : where}.`;
        if (!clean.includes("/") && !clean.startsWith("**")) {
          msg += ` A pattern without "/" only matches files directly in that folder; try "**/${clean}" to search subfolders.`;
        }
        msg += " (.gitignore'd files and node_modules are not searched.)";
        return { output: msg, data: { pattern, path: where, count: 0, files: [] } };
      }
      const lines = shown.map((m) => m.path);
      if (total > shown.length) {
        lines.push(
          `… ${fmtInt(total - shown.length)} more files not shown (${fmtInt(total)} matched); use a narrower pattern or path.`,
        );
      }
      if (stoppedEarly)
        lines.push(`(search stopped after ${fmtInt(GLOB_MAX_SCANNED)} files; narrow the path.)`);
      return {
        output: lines.join("\n"),
        data: {
          pattern,
          path: where,
          count: total,
          files: shown.map((m) => m.path),
          truncated: total > shown.length,
        },
      };
    } catch (e) {
      return exceptionResult(e, userPath);
    }
  },
};
