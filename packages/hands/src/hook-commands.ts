// Hooks as commands, from the config files' "hooks" (the way Claude Code's hooks work): each is
// a shell line run on this machine — not in the sandbox: it is the user's own program, like an
// editor's save hook — with the event as JSON on stdin; it answers with JSON on stdout
// (hooks.ts: deny, args, addContext, continue), or with nothing. A project's hooks apply only in
// a trusted folder (trust.ts ignores the key otherwise), since a cloned repository could
// otherwise run anything at the first tool call.
import { spawn } from "node:child_process";
import { HOOK_EVENTS, type HookEventName, type Hooks } from "@hands/agent";
import { SettingsError } from "./errors.js";
import { nearestName } from "./settings-schema.js";

export interface HookCommand {
  command: string;
  /** preToolUse / postToolUse: a regular expression of tool names (whole name). */
  matcher?: string;
  /** Seconds (default 30). */
  timeout?: number;
}

export type HookCommands = { [E in HookEventName]?: HookCommand[] };

/** What a hook may print before it is cut off (an answer is a few lines of JSON). */
const MAX_STDOUT = 1024 * 1024;
const MAX_STDERR = 4096;

/** The config's "hooks" checked entry by entry; `where` names the file. */
export function parseHookCommands(value: unknown, where: string): HookCommands {
  if (value === undefined || value === null) return {};
  const fail = (what: string): never => {
    throw new SettingsError(`${where}: "hooks"${what}`);
  };
  if (typeof value !== "object" || Array.isArray(value))
    fail(` must be an object of events (${HOOK_EVENTS.join(", ")})`);
  const out: HookCommands = {};
  for (const [event, list] of Object.entries(value as Record<string, unknown>)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      const near = nearestName(event, HOOK_EVENTS);
      fail(
        `: unknown event "${event}"${near ? ` (did you mean "${near}"?)` : ""}; use: ${HOOK_EVENTS.join(", ")}`,
      );
    }
    if (!Array.isArray(list)) fail(`.${event} must be a list of { command, matcher?, timeout? }`);
    out[event as HookEventName] = (list as unknown[]).map((entry, i) => {
      const at = `.${event}[${i}]`;
      if (typeof entry !== "object" || entry === null || Array.isArray(entry))
        fail(`${at} must be { command, matcher?, timeout? }`);
      const e = entry as Record<string, unknown>;
      for (const key of Object.keys(e))
        if (!["command", "matcher", "timeout"].includes(key)) fail(`${at}: unknown key "${key}"`);
      if (typeof e.command !== "string" || !e.command.trim())
        fail(`${at}.command must be a non-empty string`);
      if (e.timeout !== undefined && (typeof e.timeout !== "number" || !(e.timeout > 0) || e.timeout > 3600))
        fail(`${at}.timeout must be a number of seconds between 0 and 3600`);
      if (e.matcher !== undefined) {
        if (typeof e.matcher !== "string") fail(`${at}.matcher must be a string`);
        try {
          new RegExp(e.matcher as string);
        } catch (err) {
          fail(`${at}.matcher is not a regular expression: ${(err as Error).message}`);
        }
      }
      return {
        command: e.command as string,
        ...(e.matcher !== undefined ? { matcher: e.matcher as string } : {}),
        ...(e.timeout !== undefined ? { timeout: e.timeout as number } : {}),
      };
    });
  }
  return out;
}

/** The hook commands as Hooks, run in `workspace` with `env`. */
export function commandHooks(commands: HookCommands, workspace: string, env: NodeJS.ProcessEnv): Hooks {
  const hooks: Hooks = {};
  for (const event of HOOK_EVENTS) {
    const list = commands[event];
    if (!list?.length) continue;
    hooks[event] = list.map((c) => ({
      name: c.command,
      ...(c.matcher !== undefined ? { matcher: c.matcher } : {}),
      ...(c.timeout !== undefined ? { timeoutMs: c.timeout * 1000 } : {}),
      run: (input: object, signal: AbortSignal) =>
        runHookCommand(c.command, input, { workspace, env, signal }),
    })) as never;
  }
  return hooks;
}

/**
 * Runs one hook command: `input` as JSON on stdin, its stdout parsed as JSON (empty: no answer).
 * A non-zero exit, output that is not JSON, or an abort (the hook's timeout) is an Error.
 */
export function runHookCommand(
  command: string,
  input: object,
  opts: { workspace: string; env: NodeJS.ProcessEnv; signal: AbortSignal },
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: opts.workspace,
      env: {
        ...opts.env,
        HANDS_HOOK_EVENT: (input as { event?: string }).event ?? "",
        HANDS_WORKSPACE: opts.workspace,
      },
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group: a timeout ends what the hook started too.
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let over = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {}
    };
    const onAbort = () => kill();
    opts.signal.addEventListener("abort", onAbort, { once: true });
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length + d.length > MAX_STDOUT) {
        over = true;
        kill();
      } else stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_STDERR) stderr += d.slice(0, MAX_STDERR - stderr.length);
    });
    // A hook that does not read its stdin closes the pipe early: not an error of the hook's.
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
    child.on("error", (err) => {
      opts.signal.removeEventListener("abort", onAbort);
      reject(new Error(`could not start: ${err.message}`));
    });
    child.on("close", (code, sig) => {
      opts.signal.removeEventListener("abort", onAbort);
      // Whatever it left running in its group goes too.
      kill();
      if (opts.signal.aborted) return reject(new Error("stopped (timeout or abort)"));
      if (over) return reject(new Error(`printed more than ${MAX_STDOUT} bytes`));
      const err = stderr.trim() ? `: ${stderr.trim().slice(0, 500)}` : "";
      if (code !== 0)
        return reject(new Error(`exited with ${code === null ? `signal ${sig}` : `code ${code}`}${err}`));
      const text = stdout.trim();
      if (!text) return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new Error(`answered with something that is not JSON: ${JSON.stringify(text.slice(0, 120))}`));
      }
    });
  });
}
