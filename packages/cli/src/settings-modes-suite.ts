// Every setting, from every place it can come from (flag, environment, project config, user
// config), has the same effect in a one-shot run (`hands TASK`) and an interactive session
// (`hands -i`, the task on stdin): the real bin against the scripted model server, observed
// where it matters — what the model server receives, what the tools did, what the trace says.
// Each case also puts a different value one level lower (a decoy), so precedence is checked too:
// flags > environment > project .hands/config.json (trusted folder) > user config.
// Not here: memory.summaries, which only /compact uses (an interactive command, nothing to
// compare a one-shot run with; memory-config.test.ts covers its parsing), and the output flags
// (--json, --quiet, --no-color), which are how each mode renders rather than settings.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  type RecordedHttpRequest,
  type ServerScript,
  type ServerTurn,
  startScriptedServer,
} from "@hands/llm";
import { trustFolder } from "@hands/sdk/root";
import { type CliRun, cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-settings-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
const MCP_SERVER = fileURLToPath(new URL("../testdata/mcp-calc-server.mjs", import.meta.url));
const TASK = "do the task";

type Source = "flag" | "env" | "project" | "user";
/** A value as each source spells it; the server's URL is only known at run time. */
type Spelled = (
  url: string,
  origin: string,
) => { flag?: string[]; env?: Record<string, string>; config?: Json };
type Json = Record<string, unknown>;

interface Observed extends CliRun {
  chat: RecordedHttpRequest[];
  all: RecordedHttpRequest[];
  workspace: string;
  trace: { type: string; [k: string]: unknown }[];
}

interface Row {
  setting: string;
  /** The value under test, by source (absent: the setting has no such source). */
  value: Spelled;
  /** A different value, put one level below the source under test. */
  decoy?: Spelled;
  sources: Source[];
  script: ServerTurn[] | (() => ServerScript);
  /** The environment every case of the row starts from (besides the model server's). */
  base?: (url: string, origin: string) => Record<string, string>;
  /** Flags every case of the row passes. */
  flags?: string[];
  prepare?: (workspace: string) => void;
  observe: (o: Observed) => unknown;
  expected: unknown;
}

// The model is named: finding one through GET /models has a short timeout a loaded machine can miss.
const openaiBase = (url: string) => ({
  OPENAI_BASE_URL: url,
  OPENAI_API_KEY: "sk-base",
  HANDS_MODEL: "scripted-model",
});
const tools = (o: Observed) =>
  ((o.chat[0]?.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
const firstTool = (o: Observed) =>
  String(
    (o.chat[1]?.body.messages as { role: string; content: string }[] | undefined)?.find(
      (m) => m.role === "tool",
    )?.content ?? "",
  );
const resultOf = (o: Observed) => o.trace.filter((e) => e.type === "result").at(-1);
const loopForever = () => () =>
  ({ toolCalls: [{ name: "list_dir", arguments: { path: "." } }] }) as ServerTurn;

const rows: Row[] = [
  {
    setting: "model",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--model", "model-x"],
      env: { HANDS_MODEL: "model-x" },
      config: { model: "model-x" },
    }),
    decoy: () => ({ env: { HANDS_MODEL: "decoy" }, config: { model: "decoy" } }),
    base: (url) => ({ OPENAI_BASE_URL: url, OPENAI_API_KEY: "sk-base" }),
    script: [{ content: "ok" }],
    observe: (o) => o.chat[0]?.body.model,
    expected: "model-x",
  },
  {
    setting: "baseUrl",
    sources: ["flag", "env", "project", "user"],
    value: (url) => ({ flag: ["--base-url", url], env: { OPENAI_BASE_URL: url }, config: { baseUrl: url } }),
    // Nothing listens there: a decoy that won would reach no model.
    decoy: () => ({
      env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
      config: { baseUrl: "http://127.0.0.1:9/v1" },
    }),
    base: () => ({ OPENAI_API_KEY: "sk-base", HANDS_MODEL: "scripted-model" }),
    script: [{ content: "ok" }],
    observe: (o) => ({ requests: o.chat.length, answer: resultOf(o)?.answer }),
    expected: { requests: 1, answer: "ok" },
  },
  {
    setting: "apiKey",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--api-key", "sk-x"],
      env: { OPENAI_API_KEY: "sk-x" },
      config: { apiKey: "sk-x" },
    }),
    decoy: () => ({ env: { OPENAI_API_KEY: "sk-decoy" }, config: { apiKey: "sk-decoy" } }),
    base: (url) => ({ OPENAI_BASE_URL: url, HANDS_MODEL: "scripted-model" }),
    script: [{ content: "ok" }],
    observe: (o) => o.chat[0]?.headers.authorization,
    expected: "Bearer sk-x",
  },
  {
    setting: "provider",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--provider", "anthropic"],
      env: { HANDS_PROVIDER: "anthropic" },
      config: { provider: "anthropic" },
    }),
    decoy: () => ({ env: { HANDS_PROVIDER: "openai" }, config: { provider: "openai" } }),
    base: (url, origin) => ({
      ...openaiBase(url),
      ANTHROPIC_BASE_URL: origin,
      ANTHROPIC_API_KEY: "sk-ant",
      HANDS_MODEL: "scripted-model",
    }),
    script: [{ content: "ok" }],
    observe: (o) => o.chat[0]?.path,
    expected: "/v1/messages",
  },
  {
    setting: "reasoning",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--reasoning", "high"],
      env: { HANDS_REASONING: "high" },
      config: { reasoning: "high" },
    }),
    decoy: () => ({ env: { HANDS_REASONING: "low" }, config: { reasoning: "low" } }),
    base: openaiBase,
    script: [{ content: "ok" }],
    observe: (o) => o.chat[0]?.body.reasoning_effort,
    expected: "high",
  },
  {
    setting: "maxSteps",
    sources: ["flag", "env", "project", "user"],
    value: () => ({ flag: ["--max-steps", "2"], env: { HANDS_MAX_STEPS: "2" }, config: { maxSteps: 2 } }),
    decoy: () => ({ env: { HANDS_MAX_STEPS: "4" }, config: { maxSteps: 4 } }),
    base: openaiBase,
    script: loopForever,
    observe: (o) => ({ requests: o.chat.length, status: resultOf(o)?.status }),
    expected: { requests: 2, status: "max_steps" },
  },
  {
    setting: "maxTokens",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--max-tokens", "1500"],
      env: { HANDS_MAX_TOKENS: "1500" },
      config: { maxTokens: 1500 },
    }),
    decoy: () => ({ env: { HANDS_MAX_TOKENS: "100000" }, config: { maxTokens: 100000 } }),
    base: openaiBase,
    script: () => () => ({
      toolCalls: [{ name: "list_dir", arguments: { path: "." } }],
      usage: { inputTokens: 1000, outputTokens: 10 },
    }),
    observe: (o) => ({ requests: o.chat.length, status: resultOf(o)?.status }),
    expected: { requests: 2, status: "token_budget" },
  },
  {
    setting: "idleTimeout",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--idle-timeout", "1"],
      env: { HANDS_IDLE_TIMEOUT: "1" },
      config: { idleTimeout: 1 },
    }),
    decoy: () => ({ env: { HANDS_IDLE_TIMEOUT: "30" }, config: { idleTimeout: 30 } }),
    base: openaiBase,
    script: () => [{ content: "never finished", stallAfterEvents: 1 }, { content: "ok" }],
    observe: (o) => ({
      retries: o.trace.filter((e) => e.type === "model_retry").length,
      answer: resultOf(o)?.answer,
    }),
    expected: { retries: 1, answer: "ok" },
  },
  {
    setting: "sandbox",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--sandbox", "local"],
      env: { HANDS_SANDBOX: "local" },
      config: { sandbox: "local" },
    }),
    decoy: () => ({ env: { HANDS_SANDBOX: "bwrap" }, config: { sandbox: "bwrap" } }),
    base: openaiBase,
    flags: ["--approval", "auto"],
    script: () => [
      { toolCalls: [{ name: "run_command", arguments: { command: "echo pid=$$" } }] },
      { content: "ok" },
    ],
    // In bubblewrap the shell is a low PID of its own namespace; locally it is a host PID.
    observe: (o) => ({
      warned: /sandbox "local" does not isolate/.test(o.stderr),
      hostPid: Number(/pid=(\d+)/.exec(firstTool(o))?.[1]) > 10,
    }),
    expected: { warned: true, hostPid: true },
  },
  {
    setting: "approval",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--approval", "read-only"],
      env: { HANDS_APPROVAL: "read-only" },
      config: { approval: "read-only" },
    }),
    decoy: () => ({ env: { HANDS_APPROVAL: "auto" }, config: { approval: "auto" } }),
    base: openaiBase,
    script: () => [
      { toolCalls: [{ name: "write_file", arguments: { path: "x.txt", content: "x" } }] },
      { content: "ok" },
    ],
    observe: (o) => ({
      refused: /read-only/.test(firstTool(o)),
      written: readdirSync(o.workspace).includes("x.txt"),
    }),
    expected: { refused: true, written: false },
  },
  {
    setting: "mcpServers",
    sources: ["project", "user"],
    value: () => ({ config: { mcpServers: { calc: { command: process.execPath, args: [MCP_SERVER] } } } }),
    decoy: () => ({ config: { mcpServers: { other: { command: process.execPath, args: [MCP_SERVER] } } } }),
    base: openaiBase,
    script: [{ content: "ok" }],
    observe: (o) => tools(o).filter((t) => t.startsWith("mcp__")),
    expected: ["mcp__calc__add"],
  },
  {
    setting: "memory (enabled)",
    sources: ["flag", "project", "user"],
    value: () => ({ flag: ["--no-memory"], config: { memory: { enabled: false } } }),
    decoy: () => ({ config: { memory: { enabled: true } } }),
    base: openaiBase,
    script: [{ content: "ok" }],
    observe: (o) => tools(o).includes("recall"),
    expected: false,
  },
  {
    setting: "contextBudget",
    sources: ["flag", "env", "project", "user"],
    value: () => ({
      flag: ["--context-budget", "1200"],
      env: { HANDS_CONTEXT_BUDGET: "1200" },
      config: { memory: { contextBudget: 1200 } },
    }),
    decoy: () => ({ env: { HANDS_CONTEXT_BUDGET: "60000" }, config: { memory: { contextBudget: 60000 } } }),
    base: openaiBase,
    prepare: (ws) => writeFileSync(join(ws, "big.txt"), `${"a line of the big file\n".repeat(1000)}`),
    script: () => [{ toolCalls: [{ name: "read_file", arguments: { path: "big.txt" } }] }, { content: "ok" }],
    // Within a 1,200-token budget the second request cannot carry the 23 KB the file read returned.
    observe: (o) => JSON.stringify(o.chat[1]?.body.messages ?? "").length < 12_000,
    expected: true,
  },
  {
    setting: "memory.embeddings",
    sources: ["flag", "project", "user"],
    value: (url) => ({
      flag: ["--embeddings-url", url, "--embeddings-model", "emb"],
      config: { memory: { embeddings: { baseUrl: url, model: "emb" } } },
    }),
    base: openaiBase,
    script: [{ content: "ok" }],
    observe: (o) => o.all.some((r) => r.path === "/v1/embeddings" && r.body?.model === "emb"),
    expected: true,
  },
  {
    setting: "memory.lifecycle",
    sources: ["project", "user"],
    value: () => ({ config: { memory: { lifecycle: { maintainEveryHours: 0 } } } }),
    decoy: () => ({ config: { memory: { lifecycle: { maintainEveryHours: 1000 } } } }),
    base: openaiBase,
    // A pass that just ran: with the default (a day) or the decoy the next is not due yet.
    prepare: (ws) => {
      mkdirSync(join(ws, "..", "data"), { recursive: true });
      writeFileSync(join(ws, "..", "data", "memory.db.maintained"), "just now\n");
    },
    script: [{ content: "ok" }],
    observe: (o) =>
      readFileSync(join(o.workspace, "..", "data", "memory.db.maintained"), "utf8") !== "just now\n",
    expected: true,
  },
  {
    setting: "network",
    sources: ["flag"],
    value: () => ({ flag: ["--network", "host"] }),
    base: openaiBase,
    flags: ["--approval", "auto", "--sandbox", "bwrap"],
    script: () => [
      { toolCalls: [{ name: "run_command", arguments: { command: "echo lines=$(wc -l < /proc/net/dev)" } }] },
      { content: "ok" },
    ],
    // Without --network host a bubblewrap command sees only the loopback interface (2 header lines + lo).
    observe: (o) => Number(/lines=(\d+)/.exec(firstTool(o))?.[1]) > 3,
    expected: true,
  },
  {
    setting: "allowDomain",
    sources: ["flag"],
    value: () => ({ flag: ["--allow-domain", "example.com"] }),
    base: openaiBase,
    flags: ["--approval", "auto", "--sandbox", "bwrap"],
    script: () => [
      { toolCalls: [{ name: "run_command", arguments: { command: "echo proxy=$HTTPS_PROXY" } }] },
      { content: "ok" },
    ],
    // Commands reach the network only through the filtering proxy, which they are pointed at.
    observe: (o) => /proxy=http:\/\/\S+/.test(firstTool(o)),
    expected: true,
  },
  {
    setting: "trace",
    sources: ["flag"],
    value: () => ({ flag: ["--trace", "run-trace.jsonl"] }),
    base: openaiBase,
    script: [{ content: "ok" }],
    observe: (o) => {
      const file = join(o.workspace, "run-trace.jsonl");
      const types = existsSync(file)
        ? readFileSync(file, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l).type)
        : [];
      return { first: types[0], last: types.at(-1), elsewhere: o.trace.length };
    },
    expected: { first: "run_start", last: "result", elsewhere: 0 },
  },
  {
    setting: "cwd",
    sources: ["flag"],
    value: () => ({ flag: ["--cwd", "sub"] }),
    base: openaiBase,
    prepare: (ws) => mkdirSync(join(ws, "sub")),
    script: [{ content: "ok" }],
    observe: (o) => String(o.trace.find((e) => e.type === "run_start")?.workspace).endsWith("/ws/sub"),
    expected: true,
  },
];

/** One run of `hands` in `mode`, with the row's value from `source` and its decoy one level below. */
async function runCase(row: Row, source: Source, mode: "one-shot" | "interactive"): Promise<Observed> {
  // A row's script is a list of turns, or a factory of a fresh script for each run.
  const script = typeof row.script === "function" ? (row.script as () => ServerScript)() : row.script;
  const server = await startScriptedServer({ script, embeddings: {} });
  try {
    const home = mkdtempSync(join(scratch, `${row.setting.replace(/\W+/g, "-")}-${source}-${mode}-`));
    const ws = join(home, "ws");
    mkdirSync(join(ws, ".hands"), { recursive: true });
    row.prepare?.(ws);
    const value = row.value(server.url, server.origin);
    const decoy = row.decoy?.(server.url, server.origin);
    const env = cleanEnv(home, row.base?.(server.url, server.origin) ?? {});
    const flags = [...(row.flags ?? [])];
    const files: { project: Json; user: Json } = { project: {}, user: {} };
    const put = (where: Source, v: ReturnType<Spelled> | undefined) => {
      if (!v) return;
      if (where === "flag" && v.flag) flags.push(...v.flag);
      if (where === "env" && v.env) Object.assign(env, v.env);
      if ((where === "project" || where === "user") && v.config) Object.assign(files[where], v.config);
    };
    put(source, value);
    // The decoy goes to the next source down it has a spelling for (none below the user config).
    const order: Source[] = ["flag", "env", "project", "user"];
    const below = order
      .slice(order.indexOf(source) + 1)
      .find((s) => row.sources.includes(s) && (s === "env" ? decoy?.env : decoy?.config));
    if (below) put(below, decoy);
    writeFileSync(join(ws, ".hands", "config.json"), JSON.stringify(files.project));
    mkdirSync(join(home, "config", "hands"), { recursive: true });
    writeFileSync(join(home, "config", "hands", "config.json"), JSON.stringify(files.user));
    // Trusted: every project setting applies (untrusted folders are hostile-config.test.ts's).
    trustFolder(ws, env);
    const run =
      mode === "one-shot"
        ? await runHands([...flags, TASK], env, ws)
        : await runHands(["-i", ...flags], env, ws, `${TASK}\n`);
    const traces = join(home, "data", "traces");
    const trace = (existsSync(traces) ? readdirSync(traces) : []).flatMap((f) =>
      readFileSync(join(traces, f), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    );
    const chat = server.requests.filter((r) => /\/(chat\/completions|messages)$/.test(r.path));
    return { ...run, chat, all: server.requests, workspace: ws, trace };
  } finally {
    await server.close();
  }
}

/**
 * The matrix. `full`: every source in both modes (npm run test:heavy). Otherwise every source in
 * one-shot runs and each setting's first source interactively too: which source wins is the
 * settings' resolution, the same for both fronts; what a front does with a setting is checked
 * once per setting (settings-modes.test.ts).
 */
export function settingsMatrix(full: boolean): void {
  describe("every setting: the same effect from each source, one-shot and interactive alike", {
    concurrency: 2,
  }, () => {
    for (const row of rows)
      for (const source of row.sources)
        test(`${row.setting} from ${source}`, async () => {
          const both = full || source === row.sources[0];
          const [once, session] = await Promise.all([
            runCase(row, source, "one-shot"),
            both ? runCase(row, source, "interactive") : undefined,
          ]);
          const say = (o: Observed) =>
            `exit ${o.code}\nstderr: ${o.stderr.slice(-1500)}\nstdout: ${o.stdout.slice(-800)}\nfirst tool result: ${firstTool(o).slice(0, 1500)}`;
          assert.deepEqual(row.observe(once), row.expected, `one-shot:\n${say(once)}`);
          if (session) assert.deepEqual(row.observe(session), row.expected, `interactive:\n${say(session)}`);
        });
  });
  badValues();
}

function badValues(): void {
  describe("a bad value is a usage error (exit 2) in both modes, wherever it comes from", {
    concurrency: 2,
  }, () => {
    const cases: {
      name: string;
      flags?: string[];
      env?: Record<string, string>;
      project?: Json;
      user?: Json;
      message: RegExp;
    }[] = [
      {
        name: "--approval bogus",
        flags: ["--approval", "bogus"],
        message: /--approval: unknown approval mode "bogus"; use one of: auto, ask, read-only/,
      },
      {
        name: "HANDS_APPROVAL=bogus",
        env: { HANDS_APPROVAL: "bogus" },
        message: /HANDS_APPROVAL: unknown approval mode "bogus"/,
      },
      {
        name: 'project "approval": "bogus"',
        project: { approval: "bogus" },
        message: /\.hands\/config\.json: "approval": unknown approval mode "bogus"/,
      },
      {
        name: 'user "approval": "bogus"',
        user: { approval: "bogus" },
        message: /hands\/config\.json: "approval": unknown approval mode "bogus"/,
      },
      {
        name: "--sandbox bwarp",
        flags: ["--sandbox", "bwarp"],
        message:
          /--sandbox: unknown sandbox "bwarp"; use one of: auto, bwrap, docker, local, e2b \(did you mean "bwrap"\?\)/,
      },
      {
        name: "HANDS_MAX_STEPS=-3",
        env: { HANDS_MAX_STEPS: "-3" },
        message: /HANDS_MAX_STEPS must be a positive whole number, got "-3"/,
      },
      {
        name: 'user "maxSteps": "ten"',
        user: { maxSteps: "ten" },
        message: /config\/hands\/config\.json: "maxSteps" must be a positive whole number, got "ten"/,
      },
      {
        name: 'project "maxTokens": 1.5',
        project: { maxTokens: 1.5 },
        message: /\.hands\/config\.json: "maxTokens" must be a positive whole number of tokens, got 1\.5/,
      },
      {
        name: 'user "model": 7',
        user: { model: 7 },
        message: /config\.json: "model" must be a non-empty string, got 7/,
      },
      {
        name: '"mcpServers": 5',
        user: { mcpServers: 5 },
        message: /"mcpServers" must be a JSON object, got 5/,
      },
      {
        name: "--network bogus",
        flags: ["--network", "bogus"],
        message: /--network: unknown network "bogus"; use one of: none, host/,
      },
    ];
    for (const c of cases)
      test(c.name, async () => {
        const server = await startScriptedServer([]);
        try {
          for (const mode of ["one-shot", "interactive"] as const) {
            const home = mkdtempSync(join(scratch, "bad-"));
            const ws = join(home, "ws");
            mkdirSync(join(ws, ".hands"), { recursive: true });
            writeFileSync(join(ws, ".hands", "config.json"), JSON.stringify(c.project ?? {}));
            mkdirSync(join(home, "config", "hands"), { recursive: true });
            writeFileSync(join(home, "config", "hands", "config.json"), JSON.stringify(c.user ?? {}));
            const env = cleanEnv(home, { ...openaiBase(server.url), ...c.env });
            trustFolder(ws, env);
            const r =
              mode === "one-shot"
                ? await runHands([...(c.flags ?? []), "write x"], env, ws)
                : await runHands(["-i", ...(c.flags ?? [])], env, ws, "write x\n");
            assert.equal(r.code, 2, `${mode}: ${r.stderr}`);
            assert.match(r.stderr, c.message, mode);
          }
          assert.equal(server.requests.length, 0, "nothing reached the model");
        } finally {
          await server.close();
        }
      });
  });
}
