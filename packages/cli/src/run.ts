// The one-shot command: resolve settings and the model, run the agent, report the result.
import { randomUUID } from "node:crypto";
import { readFileSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { Agent, type AgentEvent, builtinTools, type RunStatus, TraceWriter } from "@hands/agent";
import { createProvider } from "@hands/llm";
import { HELP, parseCliArgs, UsageError } from "./args.js";
import { resolveSettings } from "./config.js";
import { findLocalServer, listModels, noModelHelp } from "./discover.js";
import { dataDir } from "./paths.js";
import { COLOR, LiveView, PLAIN } from "./render.js";
import { prepareSandbox } from "./sandbox-setup.js";

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
  const args = parseCliArgs(argv);
  if (args.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const task = args.task ?? (process.stdin.isTTY ? undefined : await readStdin());
  if (!task) throw new UsageError(`no task given.\n\n${HELP}`);

  const workspace = resolveWorkspace(args.cwd ?? process.cwd());
  const settings = resolveSettings(args, workspace);
  const useColor = args.color ?? (process.stderr.isTTY && !process.env.NO_COLOR);
  const style = useColor ? COLOR : PLAIN;
  const say = (text: string) => {
    if (!args.quiet) err(style.dim(`${text}\n`));
  };

  // Find the model endpoint and model name.
  let { baseUrl, model } = settings;
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

  const provider = createProvider({
    provider: settings.provider,
    model,
    ...(baseUrl ? { baseURL: baseUrl } : {}),
    apiKey: apiKey ?? "sk-no-key-needed",
  });

  const runId = `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`;
  const data = dataDir();
  const trace = new TraceWriter(args.trace ? resolve(args.trace) : join(data, "traces", `${runId}.jsonl`));
  const view = new LiveView(err, style);
  const listeners: ((e: AgentEvent) => void)[] = [trace.write];
  if (args.json) {
    // A reader that goes away (`hands --json … | head -1`) must not crash the run.
    let stdoutOpen = true;
    process.stdout.on("error", () => {
      stdoutOpen = false;
    });
    listeners.push((e) => {
      if (stdoutOpen) process.stdout.write(`${JSON.stringify(e)}\n`);
    });
  }
  if (!args.quiet && !args.json) listeners.push(view.onEvent);

  const box = await prepareSandbox(
    { kind: settings.sandbox, workspace, network: args.network, allowDomain: args.allowDomain },
    err,
  );
  const agent = new Agent({
    provider,
    workspace,
    tools: builtinTools(),
    createSandbox: box.create,
    maxSteps: settings.maxSteps,
    ...(settings.maxTokens ? { maxTokens: settings.maxTokens } : {}),
    outputDir: join(data, "outputs"),
    runId,
  });

  // First Ctrl-C stops the run cleanly (status "aborted"); a second one quits at once.
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    err(style.yellow("\nStopping… (Ctrl-C again to quit now)\n"));
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  try {
    const result = await agent.run(task, {
      signal: controller.signal,
      onEvent: (e) => {
        for (const l of listeners) l(e);
      },
    });
    if (!args.json) {
      if (result.status === "done") process.stdout.write(`${result.answer}\n`);
      else if (args.quiet) err(`hands: ${result.status}: ${result.reason ?? ""}\n`);
    }
    return EXIT_CODES[result.status];
  } finally {
    process.off("SIGINT", onSigint);
    await box.close();
    trace.close();
  }
}

function resolveWorkspace(dir: string): string {
  let real: string;
  try {
    real = realpathSync(resolve(dir));
  } catch {
    throw new UsageError(`workspace folder does not exist: ${dir}`);
  }
  if (!statSync(real).isDirectory()) throw new UsageError(`workspace is not a folder: ${dir}`);
  return real;
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
