// The one-shot command: resolve settings and the model, run the agent, report the result.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  Agent,
  type AgentEvent,
  type AgentOptions,
  builtinTools,
  createApprovalGate,
  projectInstructions,
  type RunStatus,
  TraceWriter,
} from "@hands/agent";
import { createProvider, type Provider } from "@hands/llm";
import { HELP, parseCliArgs, UsageError } from "./args.js";
import { resolveSettings, type Settings } from "./config.js";
import { findLocalServer, listModels, noModelHelp } from "./discover.js";
import { auditListener, loadPolicy } from "./interactive/audit.js";
import type { MemoryHost } from "./memory-open.js";
import { dataDir } from "./paths.js";
import { COLOR, LiveView, PLAIN } from "./render.js";
import { prepareSandbox } from "./sandbox-setup.js";
import { untrustedNotice } from "./trust.js";
import { realFolder } from "./trust-store.js";

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
    if (argv[0] === "memory") {
      const { runMemoryCommand } = await import("./memory-command.js");
      return await runMemoryCommand(argv.slice(1), (s) => process.stdout.write(s));
    }
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
  // Subcommands and the interactive session live in their own modules, loaded on demand.
  if (argv[0] === "sessions" || argv[0] === "init") {
    const { runSubcommand } = await import("./interactive/subcommands.js");
    return runSubcommand(argv[0], argv.slice(1));
  }
  if (argv[0] === "trust" || argv[0] === "untrust") {
    const { runTrustCommand } = await import("./trust-command.js");
    return runTrustCommand(argv[0], argv.slice(1), (s) => process.stdout.write(s));
  }
  const args = parseCliArgs(argv);
  if (args.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  // --plan opens a session where someone can accept the plan; otherwise (a pipe, --json) it runs through.
  const attended = Boolean(process.stdin.isTTY) && !args.json;
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
  const task = args.task ?? (process.stdin.isTTY ? undefined : await readStdin());
  if (!task) throw new UsageError(`no task given.\n\n${HELP}`);

  const workspace = resolveWorkspace(args.cwd ?? process.cwd());
  const settings = resolveSettings(args, workspace);
  const useColor = args.color ?? (process.stderr.isTTY && !process.env.NO_COLOR);
  const style = useColor ? COLOR : PLAIN;
  const { policy, ignored } = loadPolicy(workspace, settings.trust.trusted);
  // Said even with --quiet: a setting that did not apply changes what the run does.
  for (const line of untrustedNotice(workspace, settings.trust, [...settings.ignored, ...ignored]))
    err(style.yellow(`${line}\n`));
  const say = (text: string) => {
    if (!args.quiet) err(style.dim(`${text}\n`));
  };

  const provider = await resolveProvider(settings, err, say);
  if (typeof provider === "number") return provider;

  const runId = `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`;
  const data = dataDir();
  const trace = new TraceWriter(args.trace ? resolve(args.trace) : join(data, "traces", `${runId}.jsonl`));
  const view = new LiveView(err, style, { plan: args.plan });
  const listeners: ((e: AgentEvent) => void)[] = [trace.write, auditListener(data, runId)];
  // A reader that goes away (`hands --json … | head -1`) must not crash the run.
  let stdoutOpen = true;
  const jsonLine = (value: unknown) => {
    if (stdoutOpen) process.stdout.write(`${JSON.stringify(value)}\n`);
  };
  if (args.json) {
    process.stdout.on("error", () => {
      stdoutOpen = false;
    });
    listeners.push(jsonLine);
  }
  if (!args.quiet && !args.json) listeners.push(view.onEvent);

  const instructions = projectInstructions(workspace);
  // Memory only when asked for: a plain run never loads SQLite.
  const memory = settings.memory.enabled
    ? await (await import("./memory-run.js")).AgentMemory.open(
        memoryHost(settings, provider, data, (t) => err(style.yellow(`hands: ${t}\n`))),
        workspace,
        runId,
      )
    : undefined;
  const box = await prepareSandbox(
    {
      kind: settings.sandbox,
      workspace,
      network: args.network,
      allowDomain: args.allowDomain,
      e2bTemplate: settings.e2bTemplate,
    },
    err,
  );
  const agentOptions: AgentOptions = {
    provider,
    workspace,
    tools: memory ? [...builtinTools(), memory.tool] : builtinTools(),
    ...memory?.agentOptions(),
    createSandbox: box.create,
    maxSteps: settings.maxSteps,
    ...(settings.maxTokens ? { maxTokens: settings.maxTokens } : {}),
    outputDir: join(data, "outputs"),
    runId,
    ...(instructions ? { instructions } : {}),
    // One task runs unattended ("auto"), but the command policy still refuses what it denies.
    approve: createApprovalGate({ workspace, policy, mode: () => approvalMode(args.approval ?? "auto") }),
  };

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
      ? await planned.runWithPlan(task, agentOptions, runOptions, (items) => {
          if (!args.quiet) err(planned.planNotice(items, args.json, style));
        })
      : await new Agent(agentOptions).run(task, runOptions);
    if (!args.json) {
      if (result.status === "done") process.stdout.write(`${result.answer}\n`);
      else if (args.quiet) err(`hands: ${result.status}: ${result.reason ?? ""}\n`);
    }
    await memory?.learn(task, result).catch(() => {});
    return EXIT_CODES[result.status];
  } finally {
    process.off("SIGINT", onSigint);
    await box.close();
    trace.close();
    await memory?.close().catch(() => {});
  }
}

/** What memory needs from the run: its settings, the model, a way to reach other models, a voice. */
export function memoryHost(
  settings: Settings,
  provider: Provider,
  dataDir: string,
  warn: (text: string) => void,
): MemoryHost {
  return {
    settings: settings.memory,
    dataDir,
    provider,
    namedProvider: async (model) => {
      const p = await resolveProvider(settings, warn, () => {}, model);
      if (typeof p === "number") throw new UsageError(`no model server for the summary model ${model}`);
      return p;
    },
    warn,
  };
}

/** Finds the model endpoint and model name; a number is an exit code (nothing found). */
export async function resolveProvider(
  settings: Settings,
  err: (text: string) => void,
  say: (text: string) => void,
  modelOverride?: string,
): Promise<Provider | number> {
  let { baseUrl, model } = settings;
  if (modelOverride) model = modelOverride;
  const apiKey = settings.apiKey;
  if (settings.provider === "anthropic") {
    if (!apiKey) throw new UsageError("the anthropic provider needs ANTHROPIC_API_KEY (or --api-key).");
    model ??= "claude-sonnet-4-5";
  } else if (!baseUrl && !apiKey) {
    const local = await findLocalServer();
    if (!local) {
      err(`${noModelHelp()}\n`);
      return 2;
    }
    baseUrl = local.baseUrl;
    model ??= local.models[0];
    if (!model)
      throw new UsageError(`the ${local.label} server at ${local.baseUrl} lists no models; pass --model.`);
    say(`No model configured: using the ${local.label} server at ${local.baseUrl} with model ${model}.`);
  } else if (!model) {
    if (baseUrl) {
      const models = await listModels(baseUrl, apiKey);
      model = models?.[0];
      if (!model)
        throw new UsageError(`no --model given and ${baseUrl}/models lists none; pass --model NAME.`);
      say(`No model given: using ${model}, the first listed by ${baseUrl}.`);
    } else {
      model = "gpt-4.1-mini";
    }
  }
  return createProvider({
    provider: settings.provider,
    model,
    ...(baseUrl ? { baseURL: baseUrl } : {}),
    apiKey: apiKey ?? "sk-no-key-needed",
    ...(settings.idleTimeoutMs ? { timeoutMs: settings.idleTimeoutMs } : {}),
    ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
  });
}

export function approvalMode(value: string): "auto" | "ask" | "read-only" {
  if (value === "auto" || value === "ask" || value === "read-only") return value;
  throw new UsageError(`unknown approval mode "${value}"; use auto, ask or read-only`);
}

export function resolveWorkspace(dir: string): string {
  return realFolder(dir, "workspace folder");
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}
