// Shared by run_command and execute_python: run through the sandbox and format the result.
import type { ExecResult, Sandbox } from "@hands/sandbox";
import { EXEC_DEFAULT_TIMEOUT_S, EXEC_MAX_TIMEOUT_S } from "../specs.js";
import type { ToolContext, ToolResult } from "../types.js";
import { errorResult } from "./errors.js";
import { humanSize } from "./text.js";

export { EXEC_DEFAULT_TIMEOUT_S, EXEC_MAX_TIMEOUT_S };

/** Bytes kept per stream (head + tail) for the model; the loop caps the text further. */
export const EXEC_MAX_OUTPUT_BYTES = 512 * 1024;

export function timeoutSeconds(requested: unknown): number {
  const n = typeof requested === "number" && Number.isFinite(requested) ? requested : EXEC_DEFAULT_TIMEOUT_S;
  return Math.min(EXEC_MAX_TIMEOUT_S, Math.max(1, n));
}

/**
 * What the model reads of a command. A clean run (exit 0, nothing on stderr, not cut) is its
 * output alone, as pi's and Claude Code's shells give it: every request repeats every earlier
 * result, and the frame was 14–23 bytes a command. Anything else says the exit code and labels
 * the streams; so does a clean run whose output begins like a frame, which could otherwise pass
 * for a failure.
 */
export function formatExecResult(r: ExecResult, timeoutS: number): string {
  const stdout = r.stdout.replace(/\n$/, "");
  const clean =
    r.exitCode === 0 && !r.timedOut && !r.aborted && !r.oomKilled && !r.truncated && r.stderr === "";
  if (clean && !/^(exit code:|stdout:$|stderr:$)/m.test(stdout.split("\n", 1)[0] ?? ""))
    return stdout === "" ? "(no output)" : stdout;
  const lines: string[] = [];
  if (r.timedOut) {
    lines.push(
      `exit code: none — TIMED OUT after ${timeoutS} s; the command and every process it started were killed. If it legitimately needs longer, pass a larger timeout (max ${EXEC_MAX_TIMEOUT_S}); if it waits for input, make it non-interactive.`,
    );
  } else if (r.aborted) {
    lines.push("exit code: none — ABORTED; the command and every process it started were killed.");
  } else if (r.oomKilled) {
    lines.push("exit code: none — killed: out of memory (the limit is in stderr)");
  } else if (r.exitCode === null) {
    lines.push(`exit code: none — killed by signal ${r.signal ?? "?"}`);
  } else {
    lines.push(`exit code: ${r.exitCode}`);
  }
  const stderr = r.stderr.replace(/\n$/, "");
  if (stdout !== "") lines.push("stdout:", stdout);
  if (stderr !== "") lines.push("stderr:", stderr);
  if (stdout === "" && stderr === "") lines.push("(no output)");
  if (r.truncated) {
    const total = (r.stdoutBytes ?? 0) + (r.stderrBytes ?? 0);
    lines.push(
      `(output truncated: ${total > 0 ? `${humanSize(total)} were printed; ` : ""}only the first and last ${humanSize(EXEC_MAX_OUTPUT_BYTES / 2)} of each stream are shown — redirect to a file and grep/read it if you need the middle.)`,
    );
  }
  return lines.join("\n");
}

export async function runInSandbox(
  ctx: ToolContext,
  command: string,
  timeoutS: number,
  extra: { stdin?: string; label: string; keepBackground?: boolean; editorTerminal?: boolean },
): Promise<ToolResult> {
  let result: ExecResult;
  let sandbox: Sandbox;
  // The editor's terminal, when it runs commands (a person chose it; approvals came first).
  const editorExec = extra.editorTerminal && extra.stdin === undefined ? ctx.editor?.exec : undefined;
  if (editorExec) {
    try {
      result = await editorExec(command, {
        timeoutMs: Math.round(timeoutS * 1000),
        signal: ctx.signal,
        maxOutputBytes: EXEC_MAX_OUTPUT_BYTES,
        ...(ctx.callId ? { callId: ctx.callId } : {}),
        ...(extra.keepBackground ? { keepBackground: true } : {}),
      });
    } catch (e) {
      return errorResult(
        `could not run the ${extra.label} in the editor's terminal: ${(e as Error).message}`,
      );
    }
    return { output: formatExecResult(result, timeoutS), data: execData(result, { terminal: "editor" }) };
  }
  try {
    sandbox = await ctx.sandbox();
    result = await sandbox.exec(command, {
      timeoutMs: Math.round(timeoutS * 1000),
      signal: ctx.signal,
      maxOutputBytes: EXEC_MAX_OUTPUT_BYTES,
      ...(extra.stdin !== undefined ? { stdin: extra.stdin } : {}),
      ...(extra.keepBackground ? { keepBackground: true } : {}),
      ...(ctx.onOutput ? streamTo(ctx.onOutput) : {}),
    });
  } catch (e) {
    return errorResult(`could not run the ${extra.label}: ${(e as Error).message}`);
  }
  // A command that ran and failed is a normal result (the exit code says it); isError is for
  // "could not run at all".
  // A failure with a known cause says it in one line (and in the trace's data).
  const failed = result.exitCode !== 0 || result.oomKilled === true;
  const diagnosis =
    failed && ctx.diagnose ? await ctx.diagnose(sandbox, result).catch(() => undefined) : undefined;
  const output = formatExecResult(result, timeoutS);
  return {
    output: diagnosis ? `${output}\ndiagnosis: ${diagnosis.line}` : output,
    data: execData(result, diagnosis ? { diagnosis: { cause: diagnosis.cause, ...diagnosis.facts } } : {}),
  };
}

/** A command's result as tool data (the trace's and the UI's). */
function execData(result: ExecResult, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    ...extra,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    aborted: result.aborted,
    truncated: result.truncated,
    durationMs: result.durationMs,
    stdoutBytes: result.stdoutBytes ?? Buffer.byteLength(result.stdout),
    stderrBytes: result.stderrBytes ?? Buffer.byteLength(result.stderr),
  };
}

/** The sandbox's stream callbacks, feeding a live view. */
function streamTo(onOutput: NonNullable<ToolContext["onOutput"]>) {
  return {
    onStdout: (chunk: string) => onOutput("stdout", chunk),
    onStderr: (chunk: string) => onOutput("stderr", chunk),
  };
}
