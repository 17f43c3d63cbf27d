// The `hands` command: subcommands by name, else one task run to its end (the one-shot front
// end over the composition root: it renders the events and maps the outcome to an exit code).
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { isatty } from "node:tty";
import type { AgentEvent, RunStatus } from "@hands/agent";
import { dataDir, openSession } from "@hands/sdk/root";
import { HELP, parseCliArgs, UsageError } from "./args.js";
import { cliVersion } from "./cli-version.js";
import { ignoreClosedStdout } from "./closed-stdout.js";
import { commandNamed } from "./commands.js";
import { JsonLines } from "./json-lines.js";
import { AnswerStream, COLOR, LiveView, PLAIN } from "./render.js";

export const EXIT_CODES: Record<RunStatus, number> = {
  done: 0,
  error: 1,
  max_steps: 3,
  token_budget: 4,
  aborted: 130,
};

export async function runCli(argv: string[]): Promise<number> {
  const err = (text: string) => process.stderr.write(text);
  try {
    // Subcommands (commands.ts) live in their own modules, loaded on demand.
    const command = commandNamed(argv[0]);
    if (command) return await command.run(argv.slice(1), dataDir);
    return await runOnce(argv, err);
  } catch (e) {
    if (e instanceof UsageError) {
      err(`hands: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

async function runOnce(argv: string[], err: (text: string) => void): Promise<number> {
  // The interactive session lives in its own module, loaded on demand.
  const args = parseCliArgs(argv);
  if (args.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${cliVersion()}\n`);
    return 0;
  }
  // --plan opens a session where someone can accept the plan; otherwise (a pipe, --json) it runs through.
  // isatty(0), not process.stdin.isTTY: the stdin stream costs ~2 ms to set up, at every start.
  const stdinIsTerminal = isatty(0);
  const attended = stdinIsTerminal && !args.json;
  if (
    args.interactive ||
    (args.plan && attended) ||
    args.continue ||
    args.resume ||
    (!args.task && attended)
  ) {
    const { runInteractive } = await import("./interactive/session.js");
    return runInteractive(args, err);
  }
  const task = args.task ?? (stdinIsTerminal ? undefined : await readStdin());
  if (!task) throw new UsageError(`no task given.\n\n${HELP}`);

  // isatty(2): the stderr stream is set up only when something is written to it.
  const useColor = args.color ?? (isatty(2) && !process.env.NO_COLOR);
  const style = useColor ? COLOR : PLAIN;
  const runId = `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`;
  const session = await openSession({
    workspace: args.cwd ?? process.cwd(),
    flags: args,
    // One task runs unattended ("auto" unless a setting says otherwise), but the command
    // policy still refuses what it denies.
    approvalDefault: "auto",
    save: false,
    id: runId,
    memoryScope: runId,
    ...(args.subagents ? { subagents: true } : {}),
    ...(args.trace ? { tracePath: resolve(args.trace) } : {}),
    report: (level, text, topic) => {
      if (topic === "sandbox") err(`${text}\n`);
      // Said even with --quiet: a setting that did not apply changes what the run does.
      else if (level === "warning") err(style.yellow(`${topic === "memory" ? "hands: " : ""}${text}\n`));
      else if (!args.quiet) err(style.dim(`${text}\n`));
    },
  });

  // In a terminal the answer streams to stdout as it comes (a pipe gets it whole at the end).
  const answer =
    !args.json && process.stdout.isTTY ? new AnswerStream((t) => process.stdout.write(t)) : undefined;
  const view = new LiveView(err, style, { plan: args.plan, ...(answer ? { answer } : {}) });
  const listeners: ((e: AgentEvent) => void)[] = [];
  // A reader that goes away (`hands --json … | head -1`) must not crash the run.
  // The stdout stream is set up at the first write (often after the first request has left).
  let stdoutOpen: boolean | undefined;
  const jsonLines = new JsonLines((text) => {
    if (stdoutOpen === undefined) {
      stdoutOpen = true;
      process.stdout.on("error", () => {
        stdoutOpen = false;
      });
    }
    if (stdoutOpen) process.stdout.write(text);
  });
  if (args.json) {
    // A second Ctrl-C exits at once: what is queued still goes out.
    process.once("exit", jsonLines.flush);
    listeners.push(jsonLines.write);
  }
  // The stream's listener goes first: the live view asks it whether a step's text was shown.
  if (answer) listeners.push(answer.onEvent);
  if (!args.quiet && !args.json) listeners.push(view.onEvent);

  // First Ctrl-C stops the run cleanly (status "aborted"); a second one quits at once.
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    err(style.yellow("\nStopping… (Ctrl-C again to quit now)\n"));
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  try {
    const runOptions = {
      signal: controller.signal,
      onEvent: (e: AgentEvent) => {
        for (const l of listeners) l(e);
      },
    };
    const planned = args.plan ? await import("./plan-run.js") : undefined;
    const result = planned
      ? await planned.runWithPlan(session, task, runOptions, (items) => {
          if (!args.quiet) err(planned.planNotice(items, args.json, style));
        })
      : await session.run(task, runOptions);
    if (!args.json) {
      if (result.status === "done") {
        ignoreClosedStdout(process.stdout);
        if (answer) answer.finish(result.answer);
        else process.stdout.write(`${result.answer}\n`);
      } else if (args.quiet) err(`hands: ${result.status}: ${result.reason ?? ""}\n`);
    }
    return EXIT_CODES[result.status];
  } finally {
    jsonLines.flush();
    process.off("SIGINT", onSigint);
    await session.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}
