// The ACP client's capabilities as Hands' EditorAccess: fs/read_text_file and
// fs/write_text_file for the file tools (an unsaved buffer is what the agent reads), and, when
// the person chose it (`hands acp --terminal editor`), terminal/* for run_command. The tools
// have checked every path (workspace confinement, symbolic links) and the gate every call
// (approvals, command policy) before anything here is asked.
import {
  type AgentContext,
  type ClientCapabilities,
  methods,
  type TerminalHandle,
} from "@agentclientprotocol/sdk";
import type { EditorAccess, EditorCommandOptions } from "@hands/agent";
import type { ExecResult } from "@hands/sandbox";

/** How long an editor may take to answer once a command was killed (then the result is given up on). */
const KILL_GRACE_MS = 5000;

export interface EditorTerminals {
  /** Shows a command's terminal in its tool call (a tool_call_update with the terminal). */
  show(callId: string, terminalId: string): void;
  /** Terminals kept for background processes (keep_background), released when the session closes. */
  kept: TerminalHandle[];
}

/** What the client offers and the person allows, for one session; undefined: nothing. */
export function acpEditorAccess(
  client: AgentContext,
  sessionId: string,
  workspace: string,
  caps: ClientCapabilities,
  terminals: EditorTerminals | undefined,
): EditorAccess | undefined {
  const access: EditorAccess = {};
  if (caps.fs?.readTextFile)
    access.readText = async (path, signal) =>
      (
        await client.request(
          methods.client.fs.readTextFile,
          { sessionId, path },
          { cancellationSignal: signal },
        )
      ).content;
  if (caps.fs?.writeTextFile)
    access.writeText = async (path, content, signal) => {
      await client.request(
        methods.client.fs.writeTextFile,
        { sessionId, path, content },
        { cancellationSignal: signal },
      );
    };
  if (caps.terminal && terminals)
    access.exec = (command, o) => runInEditor(client, sessionId, workspace, command, o, terminals);
  return Object.keys(access).length ? access : undefined;
}

async function runInEditor(
  client: AgentContext,
  sessionId: string,
  workspace: string,
  command: string,
  o: EditorCommandOptions,
  terminals: EditorTerminals,
): Promise<ExecResult> {
  const started = Date.now();
  const term = await client.createTerminal(
    { sessionId, command: "bash", args: ["-c", command], cwd: workspace, outputByteLimit: o.maxOutputBytes },
    { cancellationSignal: o.signal },
  );
  if (o.callId) terminals.show(o.callId, term.id);
  let timedOut = false;
  let aborted = false;
  // A kill (the timeout, a cancel) gives the editor KILL_GRACE_MS to report the exit.
  let givenUp: () => void = () => {};
  const gaveUp = new Promise<undefined>((r) => {
    givenUp = () => setTimeout(() => r(undefined), KILL_GRACE_MS).unref();
  });
  const kill = () => {
    term.kill().catch(() => {});
    givenUp();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, o.timeoutMs);
  const onAbort = () => {
    aborted = true;
    kill();
  };
  if (o.signal.aborted) onAbort();
  else o.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const exit = await Promise.race([term.waitForExit(), gaveUp]);
    const out = await Promise.race([
      term.currentOutput(),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), KILL_GRACE_MS).unref()),
    ]);
    const text = out?.output ?? "";
    const status = exit ?? out?.exitStatus ?? undefined;
    return {
      stdout: text,
      stderr: "",
      exitCode: timedOut || aborted ? null : (status?.exitCode ?? null),
      signal: status?.signal ?? null,
      timedOut,
      aborted: aborted && !timedOut,
      truncated: out?.truncated ?? false,
      durationMs: Date.now() - started,
      stdoutBytes: Buffer.byteLength(text),
      stderrBytes: 0,
    };
  } finally {
    clearTimeout(timer);
    o.signal.removeEventListener("abort", onAbort);
    if (o.keepBackground && !timedOut && !aborted) terminals.kept.push(term);
    else
      await Promise.race([
        term.release().catch(() => {}),
        new Promise((r) => setTimeout(r, KILL_GRACE_MS).unref()),
      ]);
  }
}
