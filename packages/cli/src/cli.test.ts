// End-to-end tests of the `hands` command: a real child process, a real HTTP model server
// speaking the OpenAI (or Anthropic) wire format, real files on disk.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
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
import { startScriptedServer } from "@hands/llm";
import { BIN, type CliRun, cleanEnv as cliEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-test-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** An environment with no model settings, so tests choose exactly what the CLI sees. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cliEnv(scratch, extra);
}

function hands(args: string[], env = cleanEnv()): Promise<CliRun> {
  return runHands(args, env);
}

/** Points the CLI at a scripted server with a dummy key and model name. */
function modelFlags(server: { url: string }): string[] {
  return ["--base-url", server.url, "--api-key", "k", "--model", "m"];
}

function workspace(): string {
  return mkdtempSync(join(scratch, "ws-"));
}

const FIB_SCRIPT = [
  {
    content: "I will write fib.py.",
    toolCalls: [
      {
        name: "write_file",
        arguments: {
          path: "fib.py",
          content: "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\nprint(fib(10))\n",
        },
      },
    ],
  },
  { content: "Run it.", toolCalls: [{ name: "run_command", arguments: { command: "python3 fib.py" } }] },
  { content: "55" },
];

const PLAN_SCRIPT = [
  { content: "", toolCalls: [{ name: "list_dir", arguments: {} }] },
  { content: "Plan:\n- [ ] Create greet.py\n- [ ] Run it" },
  {
    content: "",
    toolCalls: [
      {
        name: "todo",
        arguments: {
          items: [
            { text: "Create greet.py", status: "in_progress" },
            { text: "Run it", status: "pending" },
          ],
        },
      },
      { name: "write_file", arguments: { path: "greet.py", content: "print('hi')\n" } },
    ],
  },
  { content: "", toolCalls: [{ name: "run_command", arguments: { command: "python3 greet.py" } }] },
  {
    content: "",
    toolCalls: [
      {
        name: "todo",
        arguments: {
          items: [
            { text: "Create greet.py", status: "done" },
            { text: "Run it", status: "done" },
          ],
        },
      },
    ],
  },
  { content: "It printed hi." },
];

describe("hands (one-shot)", () => {
  test("writes the file, runs it, shows the steps on stderr and the answer on stdout", async () => {
    const server = await startScriptedServer(FIB_SCRIPT);
    const ws = workspace();
    const r = await hands(
      [
        "--model",
        "qwen2.5-coder",
        "--cwd",
        ws,
        "create fib.py that prints fib(10), run it, tell me the output",
      ],
      cleanEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test" }),
    );
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "55\n");
    assert.match(r.stderr, /● I will write fib\.py\./);
    assert.match(r.stderr, /→ write_file fib\.py/);
    assert.match(r.stderr, /→ run_command python3 fib\.py/);
    assert.match(r.stderr, /✓ exit code: 0 · 55 · \d+ ms/);
    assert.match(r.stderr, /✔ done · 3 steps/);
    assert.ok(existsSync(join(ws, "fib.py")));
    // The model saw the command's real output.
    const third = server.requests[2]!.body as { messages: { role: string; content: string }[] };
    assert.match(third.messages.at(-1)!.content, /55/);
    // A trace was written under the data directory.
    const traces = readdirSync(join(scratch, "data", "traces"));
    assert.ok(traces.length >= 1);
  });

  test("--json prints one event per line and ends with the result", async () => {
    const server = await startScriptedServer(FIB_SCRIPT);
    const ws = workspace();
    const trace = join(ws, "..", "trace-json.jsonl");
    const r = await hands(
      ["--json", "--trace", trace, ...modelFlags(server), "--cwd", ws, "fib"],
      cleanEnv(),
    );
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const last = events.at(-1);
    assert.equal(last.type, "result");
    assert.equal(last.status, "done");
    assert.equal(last.answer, "55");
    assert.equal(last.steps, 3);
    assert.equal(typeof last.usage.inputTokens, "number");
    assert.ok(events.some((e) => e.type === "tool_end" && e.name === "run_command" && /55/.test(e.output)));
    const traced = readFileSync(trace, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(traced.at(-1).type, "result");
    assert.ok(traced.some((e) => e.type === "model_request" && e.messageCount === 2));
  });

  test("the live view marks a failed command ✗ and a timed-out one ⏱, never ✓", async () => {
    const server = await startScriptedServer([
      { toolCalls: [{ name: "run_command", arguments: { command: "echo boom >&2; exit 3" } }] },
      { toolCalls: [{ name: "run_command", arguments: { command: "sleep 30", timeout: 1 } }] },
      { toolCalls: [{ name: "run_command", arguments: { command: "true" } }] },
      { content: "finished" },
    ]);
    const r = await hands([...modelFlags(server), "--sandbox", "local", "--cwd", workspace(), "x"]);
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    const marks = r.stderr
      .split("\n")
      .filter((l) => /^ {2}\S /.test(l))
      .map((l) => l.trim().split(" ").slice(0, 4).join(" "));
    assert.deepEqual(marks, ["✗ exit code: 3", "⏱ exit code: none", "✓ exit code: 0"]);
  });

  test("the step limit gives exit code 3 and says why", async () => {
    const server = await startScriptedServer(() => ({ toolCalls: [{ name: "list_dir", arguments: {} }] }));
    const r = await hands(["--max-steps", "2", ...modelFlags(server), "--cwd", workspace(), "x"]);
    await server.close();
    assert.equal(r.code, 3);
    assert.match(r.stderr, /max_steps: stopped after the step limit of 2 steps/);
    assert.equal(r.stdout, "");
  });

  test("a model endpoint that keeps failing gives a clear error, exit 1, no stack trace", async () => {
    const server = await startScriptedServer(() => ({ status: 500, errorMessage: "upstream exploded" }));
    const r = await hands([...modelFlags(server), "--cwd", workspace(), "x"]);
    await server.close();
    assert.equal(r.code, 1);
    assert.match(r.stderr, /error: model call failed: .*500/);
    assert.doesNotMatch(r.stderr, /\n\s+at .*\.js:\d+/);
  });

  test("a model server gone silent is retried after the idle timeout (flag, env or config), and the user sees it", async () => {
    const configHome = join(scratch, "idle-config");
    mkdirSync(join(configHome, "hands"), { recursive: true });
    writeFileSync(join(configHome, "hands", "config.json"), JSON.stringify({ idleTimeout: 1 }));
    const ways: Array<[string, string[], NodeJS.ProcessEnv]> = [
      ["flag", ["--idle-timeout", "1"], cleanEnv()],
      ["env", [], cleanEnv({ HANDS_IDLE_TIMEOUT: "1" })],
      ["config", [], cleanEnv({ XDG_CONFIG_HOME: configHome })],
    ];
    for (const [way, flags, env] of ways) {
      const server = await startScriptedServer([{ neverAnswer: true }, { content: "answered on the retry" }]);
      const started = performance.now();
      const r = await hands([...modelFlags(server), ...flags, "--cwd", workspace(), "x"], env);
      await server.close();
      assert.equal(r.code, 0, `${way}: ${r.stderr}`);
      assert.equal(r.stdout, "answered on the retry\n", way);
      assert.match(
        r.stderr,
        /↻ model call failed \(timed out: no data from the server for 1 s\); retry 1/,
        way,
      );
      assert.ok(performance.now() - started < 10_000, way);
    }
    const bad = await hands(["--idle-timeout", "soon", "x"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--idle-timeout must be a positive whole number/);
  });

  test("no model configured and no local server: exact instructions, exit 2", async () => {
    const r = await hands(
      ["--cwd", workspace(), "x"],
      cleanEnv({ HANDS_LOCAL_SERVERS: "http://127.0.0.1:9/v1" }),
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no model is configured/);
    assert.match(r.stderr, /export OPENAI_BASE_URL=/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });

  test("no model configured but a local server answers: it is used, and the CLI says so", async () => {
    const server = await startScriptedServer([{ content: "hello from local" }]);
    const r = await hands(
      ["--cwd", workspace(), "x"],
      cleanEnv({ HANDS_LOCAL_SERVERS: `http://127.0.0.1:9/v1,${server.url}` }),
    );
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "hello from local\n");
    assert.match(
      r.stderr,
      new RegExp(`using the local server at ${server.url.replace(/[/.]/g, "\\$&")} with model`),
    );
  });

  test("--provider react drives the text protocol over the same endpoint", async () => {
    const server = await startScriptedServer([
      {
        content:
          'Thought: make the file\nAction: write_file\nAction Input: {"path": "r.txt", "content": "react ok",}',
      },
      { content: "Thought: done\nFinal Answer: wrote r.txt" },
    ]);
    const ws = workspace();
    const r = await hands(["--provider", "react", ...modelFlags(server), "--cwd", ws, "x"]);
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "wrote r.txt\n");
    assert.equal(readFileSync(join(ws, "r.txt"), "utf8"), "react ok");
  });

  test("--provider anthropic speaks the Messages API", async () => {
    const server = await startScriptedServer([
      { content: "Listing.", toolCalls: [{ name: "list_dir", arguments: {} }] },
      { content: "The folder has a.txt." },
    ]);
    const ws = workspace();
    writeFileSync(join(ws, "a.txt"), "hi");
    const r = await hands(
      [
        "--provider",
        "anthropic",
        "--base-url",
        server.origin,
        "--model",
        "claude-test",
        "--cwd",
        ws,
        "what is here?",
      ],
      cleanEnv({ ANTHROPIC_API_KEY: "sk-ant-test" }),
    );
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "The folder has a.txt.\n");
    assert.ok(server.requests.every((q) => q.path === "/v1/messages"));
    assert.equal(server.requests[0]!.headers["x-api-key"], "sk-ant-test");
    const second = server.requests[1]!.body as { messages: { role: string; content: unknown }[] };
    assert.match(JSON.stringify(second.messages.at(-1)), /tool_result.*a\.txt/);
  });

  test("Ctrl-C stops the run cleanly: status aborted, exit 130", async () => {
    const server = await startScriptedServer([{ content: "slow", delayMs: 10_000 }]);
    const child = spawn(process.execPath, [BIN, "--json", ...modelFlags(server), "--cwd", workspace(), "x"], {
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let interrupted = false;
    child.stdout.on("data", (d) => {
      stdout += d;
      if (!interrupted && /"type":"model_request"/.test(stdout)) {
        interrupted = true;
        child.kill("SIGINT");
      }
    });
    const started = Date.now();
    const code = await new Promise((r) => child.on("close", r));
    await server.close();
    assert.equal(code, 130);
    assert.ok(Date.now() - started < 5000, "stopped without waiting for the model");
    const last = JSON.parse(stdout.trim().split("\n").at(-1)!);
    assert.equal(last.type, "result");
    assert.equal(last.status, "aborted");
  });

  test("--plan without a terminal: a read-only plan, shown on stderr, then executed with the todo tool", async () => {
    const server = await startScriptedServer(PLAN_SCRIPT);
    const ws = workspace();
    const r = await hands(["--plan", ...modelFlags(server), "--cwd", ws, "say hi in python"]);
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "It printed hi.\n");
    assert.match(r.stderr, /Plan:\n {2}1\. \[ \] Create greet\.py\n {2}2\. \[ \] Run it\n/);
    assert.match(
      r.stderr,
      /No one to accept or edit it \(standard input is not a terminal\): executing it as proposed/,
    );
    assert.match(r.stderr, /→ todo/);
    assert.equal(readFileSync(join(ws, "greet.py"), "utf8"), "print('hi')\n");
    const bodies = server.requests.filter((q) => q.method === "POST").map((q) => q.body);
    const toolNames = (i: number) => (bodies[i].tools as any[]).map((t) => t.function.name);
    for (const i of [0, 1]) {
      assert.ok(toolNames(i).includes("read_file"));
      assert.ok(!toolNames(i).some((n) => ["write_file", "edit_file", "run_command", "todo"].includes(n)));
    }
    assert.match(bodies[0].messages[0].content, /PLAN MODE/);
    assert.ok(toolNames(2).includes("todo") && toolNames(2).includes("write_file"));
    assert.doesNotMatch(bodies[2].messages[0].content, /PLAN MODE/);
    // The execution continues the planning conversation, then states the accepted plan.
    const roles = bodies[2].messages.map((m: any) => m.role);
    assert.deepEqual(roles, ["system", "user", "assistant", "tool", "assistant", "user"]);
    assert.match(bodies[2].messages.at(-1).content, /1\. Create greet\.py\n2\. Run it/);
  });

  test("--plan --json: the plan is an event of its own between the two runs, in the output and the trace", async () => {
    const server = await startScriptedServer(PLAN_SCRIPT);
    const trace = join(scratch, "plan-trace.jsonl");
    const r = await hands([
      "--plan",
      "--json",
      "--trace",
      trace,
      ...modelFlags(server),
      "--cwd",
      workspace(),
      "say hi",
    ]);
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    // The trace holds the same stream, the plan included.
    const traced = readFileSync(trace, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(traced.find((e) => e.type === "plan")?.items, ["Create greet.py", "Run it"]);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const types = events.map((e) => e.type);
    const plan = types.indexOf("plan");
    assert.deepEqual(events[plan].items, ["Create greet.py", "Run it"]);
    assert.equal(types.indexOf("result"), plan - 1, "the planning run's result comes just before it");
    assert.equal(types.indexOf("run_start", plan), plan + 1);
    assert.equal(events.at(-1).type, "result");
    assert.equal(events.at(-1).answer, "It printed hi.");
    assert.match(r.stderr, /\(--json output\): executing it as proposed/);
  });

  test("--plan: a reply without a checklist executes nothing and fails", async () => {
    const server = await startScriptedServer(() => ({ content: "Which language do you want?" }));
    const ws = workspace();
    const r = await hands(["--plan", "--json", ...modelFlags(server), "--cwd", ws, "say hi"]);
    assert.equal(r.code, 1);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(events.find((e) => e.type === "plan")?.items, []);
    assert.equal(server.requests.filter((q) => q.method === "POST").length, 1);
    assert.deepEqual(readdirSync(ws), []);
    // --json's last line is the run's result, and it says why.
    assert.equal(events.at(-1).type, "result");
    assert.equal(events.at(-1).status, "error");
    assert.match(events.at(-1).reason, /plan has no checklist/);
    // The live view never calls it done, and ends with the reason.
    const live = await hands(["--plan", ...modelFlags(server), "--cwd", ws, "say hi"]);
    assert.equal(live.code, 1);
    assert.equal(live.stdout, "");
    assert.doesNotMatch(live.stderr, /done/);
    assert.match(live.stderr, /✔ planned · 1 step/);
    assert.match(
      live.stderr,
      /✘ error: the model's plan has no checklist, so nothing was executed · [^\n]*\n$/,
    );
    const quiet = await hands(["--plan", "--quiet", ...modelFlags(server), "--cwd", ws, "say hi"]);
    await server.close();
    assert.equal(quiet.code, 1);
    assert.equal(quiet.stdout, "");
    assert.equal(quiet.stderr, "hands: error: the model's plan has no checklist, so nothing was executed\n");
  });

  test("bad flags and values are usage errors with exit 2", async () => {
    const unknown = await hands(["--frobnicate", "x"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /hands: .*--frobnicate/);
    assert.match(unknown.stderr, /See hands --help/);
    const typo = await hands(["--max-step", "3", "x"]);
    assert.equal(typo.code, 2);
    assert.match(
      typo.stderr,
      /^hands: unknown flag --max-step \(did you mean --max-steps\?\)\nSee hands --help/,
    );
    const steps = await hands(["--max-steps", "zero", "x"]);
    assert.equal(steps.code, 2);
    assert.match(steps.stderr, /--max-steps must be a positive whole number/);
    // A negative number looks like a flag to the parser; the message still names the flag and
    // what it expects instead of the parser's "argument is ambiguous".
    const negative = await hands(["--max-steps", "-3", "x"]);
    assert.equal(negative.code, 2);
    assert.equal(
      negative.stderr,
      'hands: --max-steps must be a positive whole number, got "-3"\n  --max-steps N       step limit (default 50)\nSee hands --help for every flag.\n',
    );
    const missing = await hands(["--model"]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^hands: --model needs a value\n {2}--model NAME .*\nSee hands --help/);
    const swallowed = await hands(["--model", "--json", "x"]);
    assert.equal(swallowed.code, 2);
    assert.match(swallowed.stderr, /--model needs a value, but the next argument "--json" looks like a flag/);
    const switchValue = await hands(["--json=yes", "x"]);
    assert.equal(switchValue.code, 2);
    assert.match(switchValue.stderr, /--json is a switch and takes no value \(got "yes"\)/);
    const provider = await hands(["--provider", "llama", "--cwd", workspace(), "x"]);
    assert.equal(provider.code, 2);
    assert.match(provider.stderr, /unknown provider "llama"/);
    const cwd = await hands(["--cwd", join(scratch, "nope"), "x"]);
    assert.equal(cwd.code, 2);
    assert.match(cwd.stderr, /workspace folder does not exist/);
  });

  test("--help and --version", async () => {
    const help = await hands(["--help"]);
    assert.equal(help.code, 0);
    for (const flag of [
      "--base-url",
      "--api-key",
      "--model",
      "--provider",
      "--cwd",
      "--max-steps",
      "--json",
      "--trace",
    ]) {
      assert.ok(help.stdout.includes(flag), `help mentions ${flag}`);
    }
    const version = await hands(["--version"]);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});
