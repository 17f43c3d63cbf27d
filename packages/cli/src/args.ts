// Command-line parsing for `hands [options] "<task>"`. Flag names are an interface other
// tools rely on: keep them.
import { parseArgs } from "node:util";
import { modelRolesFromText, positiveInt, SettingsError as UsageError } from "@hands/sdk/root";
import { COMMANDS_SECTION } from "./command-help.js";

export interface CliArgs {
  task?: string;
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  provider?: string;
  /** off | low | medium | high: how hard a reasoning model thinks. */
  reasoning?: string;
  cwd?: string;
  maxSteps?: number;
  maxTokens?: number;
  /** Models by role (--models planner=NAME,strong=NAME). */
  models?: Record<string, unknown>;
  /** Seconds without a byte from the model server before the attempt is retried. */
  idleTimeout?: number;
  contextBudget?: number;
  /** --memory (true), --no-memory (false), or neither (memory's own default: on). */
  memory?: boolean;
  /** --no-diagnostics (false): no language-server errors after edits. */
  diagnostics?: boolean;
  memorySummaries?: string;
  /** --no-repo-map: "off" (no repository map in the first request). */
  repoMap?: string;
  repoMapTokens?: number;
  embeddingsUrl?: string;
  embeddingsModel?: string;
  json: boolean;
  trace?: string;
  sandbox?: string;
  /** --sandbox e2b: the template sandboxes start from. */
  e2bTemplate?: string;
  /** --template NAME: a local template for docker and bwrap sandboxes. */
  template?: string;
  network?: string;
  allowDomain?: string[];
  /** --database NAME=URL|PATH, repeatable: query_database's databases. */
  databases?: Record<string, unknown>;
  quiet: boolean;
  color?: boolean;
  help: boolean;
  version: boolean;
  /** Interactive session options (see interactive/). */
  interactive: boolean;
  approval?: string;
  plan: boolean;
  /** Offer the task tool (sub-agents). */
  subagents: boolean;
  continue: boolean;
  resume?: string;
}

/** A usage or configuration mistake: the CLI prints its message and exits 2. */
export { UsageError };

export const HELP = `Usage: hands [options] "<task>"

Runs one task to the end in the workspace, without asking anything.
The live view goes to stderr, the final answer to stdout.

Model:
  --provider NAME     openai | anthropic | react (text protocol for models without tool calling)
  --base-url URL      OpenAI-compatible endpoint (env OPENAI_BASE_URL)
  --api-key KEY       API key (env OPENAI_API_KEY; for anthropic ANTHROPIC_API_KEY)
  --model NAME        model name (env HANDS_MODEL)
  --idle-timeout S    retry a model call after S seconds without data (default 120; env HANDS_IDLE_TIMEOUT)
  --reasoning LEVEL   off | low | medium | high: how hard a reasoning model thinks (env HANDS_REASONING)

Run:
  --cwd DIR           workspace (default: the current directory)
  --max-steps N       step limit (default 50)
  --max-tokens N      token budget for the whole run (input + output)
  --sandbox KIND      where commands run: bwrap (default on Linux), docker, local (no isolation),
                      e2b (an E2B-protocol service: E2B_API_KEY, E2B_API_URL, E2B_SANDBOX_URL, E2B_DOMAIN)
  --e2b-template NAME the e2b sandbox's template (default base; env HANDS_E2B_TEMPLATE)
  --network host      give sandboxed commands the host's network (default: none)
  --allow-domain LIST only these domains (comma-separated), through a filtering proxy; also
                      what web_fetch may reach (without it web_fetch is not offered)
  --database NAME=URL a database query_database may read: postgres://… or an SQLite file in the
                      workspace (repeatable; "databases" in config; read-only)
  --context-budget N  memory assembles each step's context within N tokens (AdaMEM)
  --memory            memory with the default budget (half the model's context window; the default)
  --no-memory         no memory: every step resends the whole history
  --no-diagnostics    no language-server errors (typescript-language-server, pyright) after edits
  --memory-summaries extractive|model|NAME   how memory summarises (default extractive, no model)
  --embeddings-url URL, --embeddings-model NAME   an OpenAI-compatible /embeddings endpoint for memory
  --repo-map-tokens N size of the map of the code related to the task in the first request (default 512)
  --no-repo-map       no repository map in the first request (the repo_map tool stays)
  --trace FILE        JSONL trace file (default: under the data directory)
  --json              one JSON event per line on stdout; the last line is the result
  --quiet             no live view on stderr
  --no-color          plain output

Interactive (\`hands\` with no task in a terminal):
  -i, --interactive   open a session even without a terminal (plain text in a pipe)
  --approval MODE     auto | ask | read-only (default: ask in a session, auto for one task; env HANDS_APPROVAL)
  --plan              plan the first request as a checklist before changing anything
                      (without a terminal, or with --json, the plan runs as proposed;
                      items it marks "(independent)" run as parallel sub-agents)
  --models ROLE=NAME,…
                      models by role: planner, executor, summarizer, subagent, chat (plain
                      chat), strong (after escalateAfter=N failed tool calls in a row; default 2)
  --subagents         offer the task tool: the model hands parts of the work to sub-agents
                      with fresh contexts, several at once (their tokens count in --max-tokens)
  -c, --continue      resume the last session in this workspace
  --resume ID         resume a session (see \`hands sessions\`)

${COMMANDS_SECTION}

  -h, --help          this help
  -v, --version       the version

Without a configured model, hands looks for a local OpenAI-compatible server
(Ollama on :11434, llama.cpp / vLLM on :8080 and :8000) and uses it.
Settings also come from .hands/config.json (project) and ~/.config/hands/config.json (user);
a project's settings that weaken security or send secrets elsewhere apply only once you trust it.
Exit code: 0 done; 1 error; 2 usage or configuration; 3 step limit; 4 token budget; 130 aborted.`;

/** The line of HELP that documents `--name`, to show beside a mistake with that flag. */
function helpLine(name: string): string | undefined {
  const re = new RegExp(`^\\s+(?:-\\w, )?--${name}(?=[\\s,]).*$`, "m");
  return HELP.match(re)?.[0].trim();
}

/** A usage error about one flag: what went wrong, what the flag expects, and where to read more. */
/** --database NAME=VALUE entries as the config's "databases" object. */
function databaseFlags(values: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const text of values) {
    const eq = text.indexOf("=");
    if (eq <= 0 || eq === text.length - 1)
      throw new UsageError(`--database: expected NAME=postgres://… or NAME=path/to/file.db, got "${text}"`);
    out[text.slice(0, eq)] = text.slice(eq + 1);
  }
  return out;
}

function flagError(name: string, problem: string): UsageError {
  const line = helpLine(name);
  return new UsageError(`${problem}${line ? `\n  ${line}` : ""}\nSee hands --help for every flag.`);
}

const NUMBER_FLAGS = new Set(["max-steps", "max-tokens", "idle-timeout", "context-budget"]);

/**
 * Says in plain words what is wrong with `argv`, which the strict parser refused. The loose parse
 * shows each flag with the value it would take, so the message can name the flag and its value.
 */
function explainParseError(argv: string[], original: Error): UsageError {
  const options = OPTIONS as Record<string, { type: "string" | "boolean" }>;
  const { tokens } = parseArgs({
    args: argv,
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const t of tokens) {
    if (t.kind !== "option") continue;
    const spec = options[t.name];
    if (!spec) {
      const near = closestFlag(t.name);
      return new UsageError(
        `unknown flag ${t.rawName}${near ? ` (did you mean --${near}?)` : ""}\nSee hands --help for every flag.`,
      );
    }
    const flag = `--${t.name}`;
    if (spec.type === "boolean" && t.value !== undefined)
      return flagError(t.name, `${flag} is a switch and takes no value (got "${t.value}")`);
    if (spec.type !== "string") continue;
    if (t.value === undefined) return flagError(t.name, `${flag} needs a value`);
    if (!t.inlineValue && t.value.startsWith("-")) {
      if (NUMBER_FLAGS.has(t.name))
        return flagError(t.name, `${flag} must be a positive whole number, got "${t.value}"`);
      return flagError(
        t.name,
        `${flag} needs a value, but the next argument "${t.value}" looks like a flag (write ${flag}=${t.value} if it is the value)`,
      );
    }
  }
  return new UsageError(
    `${original.message.replace(/^TypeError \[[A-Z_]+\]: /, "")}\nSee hands --help for every flag.`,
  );
}

/** The known flag nearest to a mistyped one (a typo or two away), if any. */
function closestFlag(name: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const known of Object.keys(OPTIONS)) {
    const d = editDistance(name, known);
    if (d < bestDistance) {
      best = known;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

export function parseCliArgs(argv: string[]): CliArgs {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw explainParseError(argv, err as Error);
  }
  try {
    return toCliArgs(parsed);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const flag = err.message.match(/^--([a-z-]+) /)?.[1];
    throw flag ? flagError(flag, err.message) : err;
  }
}

function toCliArgs(parsed: ReturnType<typeof parse>): CliArgs {
  const v = parsed.values;
  const task = parsed.positionals.join(" ").trim();
  return {
    ...(task ? { task } : {}),
    ...(v["base-url"] ? { baseUrl: v["base-url"] } : {}),
    ...(v["api-key"] ? { apiKey: v["api-key"] } : {}),
    ...(v.model ? { model: v.model } : {}),
    ...(v.provider ? { provider: v.provider } : {}),
    ...(v.reasoning ? { reasoning: v.reasoning } : {}),
    ...(v.cwd ? { cwd: v.cwd } : {}),
    ...(v["max-steps"] !== undefined ? { maxSteps: positiveInt("--max-steps", v["max-steps"]) } : {}),
    ...(v["max-tokens"] !== undefined ? { maxTokens: positiveInt("--max-tokens", v["max-tokens"]) } : {}),
    ...(v.models ? { models: modelRolesFromText(v.models) } : {}),
    ...(v["idle-timeout"] !== undefined
      ? { idleTimeout: positiveInt("--idle-timeout", v["idle-timeout"]) }
      : {}),
    ...(v["context-budget"] !== undefined
      ? { contextBudget: positiveInt("--context-budget", v["context-budget"]) }
      : {}),
    ...(v["no-memory"] ? { memory: false } : v.memory ? { memory: true } : {}),
    ...(v["no-diagnostics"] ? { diagnostics: false } : {}),
    ...(v["memory-summaries"] ? { memorySummaries: v["memory-summaries"] } : {}),
    ...(v["no-repo-map"] ? { repoMap: "off" } : {}),
    ...(v["repo-map-tokens"] !== undefined
      ? { repoMapTokens: positiveInt("--repo-map-tokens", v["repo-map-tokens"]) }
      : {}),
    ...(v["embeddings-url"] ? { embeddingsUrl: v["embeddings-url"] } : {}),
    ...(v["embeddings-model"] ? { embeddingsModel: v["embeddings-model"] } : {}),
    ...(v.trace ? { trace: v.trace } : {}),
    ...(v.sandbox ? { sandbox: v.sandbox } : {}),
    ...(v["e2b-template"] ? { e2bTemplate: v["e2b-template"] } : {}),
    ...(v.template ? { template: v.template } : {}),
    ...(v.network ? { network: v.network } : {}),
    ...(v["allow-domain"]?.length
      ? {
          allowDomain: v["allow-domain"]
            .flatMap((d) => d.split(","))
            .map((d) => d.trim())
            .filter(Boolean),
        }
      : {}),
    ...(v.database?.length ? { databases: databaseFlags(v.database) } : {}),
    json: v.json ?? false,
    quiet: v.quiet ?? false,
    ...(v["no-color"] ? { color: false } : {}),
    help: v.help ?? false,
    version: v.version ?? false,
    interactive: v.interactive ?? false,
    ...(v.approval ? { approval: v.approval } : {}),
    plan: v.plan ?? false,
    subagents: v.subagents ?? false,
    continue: v.continue ?? false,
    ...(v.resume ? { resume: v.resume } : {}),
  };
}

const OPTIONS = {
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  model: { type: "string" },
  provider: { type: "string" },
  reasoning: { type: "string" },
  cwd: { type: "string" },
  "max-steps": { type: "string" },
  "max-tokens": { type: "string" },
  "idle-timeout": { type: "string" },
  "context-budget": { type: "string" },
  memory: { type: "boolean" },
  "no-memory": { type: "boolean" },
  "no-diagnostics": { type: "boolean" },
  "memory-summaries": { type: "string" },
  "no-repo-map": { type: "boolean" },
  "repo-map-tokens": { type: "string" },
  "embeddings-url": { type: "string" },
  "embeddings-model": { type: "string" },
  json: { type: "boolean" },
  trace: { type: "string" },
  sandbox: { type: "string" },
  "e2b-template": { type: "string" },
  template: { type: "string" },
  network: { type: "string" },
  "allow-domain": { type: "string", multiple: true },
  database: { type: "string", multiple: true },
  quiet: { type: "boolean" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
  interactive: { type: "boolean", short: "i" },
  approval: { type: "string" },
  plan: { type: "boolean" },
  subagents: { type: "boolean" },
  models: { type: "string" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string" },
} as const;

function parse(argv: string[]) {
  return parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
}
