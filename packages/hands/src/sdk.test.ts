// The SDK against the scripted model server: options checked by name, safe defaults that say
// what they are, abort, structured output that never matches, approvals, resume.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { type ScriptedServer, type ServerScript, startScriptedServer } from "@hands/llm";
import { createSession, openAgentMemory, type SessionOptions, SettingsError } from "./index.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-sdk-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const servers: ScriptedServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function setup(script: ServerScript) {
  const server = await startScriptedServer(script);
  servers.push(server);
  const home = mkdtempSync(join(scratch, "case-"));
  const workspace = join(home, "ws");
  mkdirSync(workspace);
  const options: SessionOptions = {
    workspace,
    baseURL: server.url,
    apiKey: "sk-test",
    model: "scripted-model",
    dataDir: join(home, "data"),
    env: {},
  };
  return { server, workspace, home, options };
}

const chat = (s: ScriptedServer) => s.requests.filter((r) => r.path.endsWith("/chat/completions"));

test("misspelled options are errors that name the right one; nothing is started", async () => {
  const { server, options } = await setup([]);
  const { baseURL, ...rest } = options;
  await assert.rejects(
    createSession({ ...rest, baseUrl: baseURL } as SessionOptions),
    (e: Error) =>
      e instanceof SettingsError && /unknown option "baseUrl" \(did you mean "baseURL"\?\)/.test(e.message),
  );
  await assert.rejects(
    createSession({ ...options, maxStep: 3 } as SessionOptions),
    /unknown option "maxStep" \(did you mean "maxSteps"\?\)/,
  );
  await assert.rejects(
    createSession({ ...options, memory: { budget: 10 } } as SessionOptions),
    /unknown memory option "budget"/,
  );
  await assert.rejects(
    createSession({ ...options, approval: "bogus" } as unknown as SessionOptions),
    /unknown approval mode "bogus"/,
  );
  await assert.rejects(
    createSession({ ...options, maxSteps: -3 }),
    /maxSteps must be a positive whole number/,
  );
  const session = await createSession(options);
  try {
    await assert.rejects(
      session.run("x", { signl: AbortSignal.timeout(1) } as never),
      /unknown run option "signl" \(did you mean "signal"\?\)/,
    );
    await assert.rejects(
      session.run("x", { outputSchema: { type: "nonsense" } }),
      /outputSchema is not a valid JSON Schema/,
    );
  } finally {
    await session.close();
  }
  assert.equal(chat(server).length, 0, "no request was sent");
});

test("safe defaults: an isolating sandbox and the built-in policy, in the session and every result", async () => {
  const { server, options, workspace } = await setup([
    { toolCalls: [{ name: "run_command", arguments: { command: "git push --force origin main" } }] },
    { content: "could not push" },
  ]);
  const session = await createSession(options);
  try {
    assert.deepEqual(session.safety, {
      sandbox: "bwrap",
      isolated: true,
      commandPolicy: "builtin",
      approval: "auto",
    });
    const result = await session.run("push it");
    assert.equal(result.status, "done");
    assert.deepEqual(result.safety, session.safety);
    // Nobody to ask: the built-in "ask" rule for a forced push refuses it, with a reason.
    const tool = chat(server)[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
    assert.match(tool.content, /needs a person's approval.*nobody can be asked here/);
    assert.ok(existsSync(workspace));
  } finally {
    await session.close();
  }
});

test("opting out is explicit and said: sandbox local, commandPolicy none", async () => {
  const { server, options } = await setup([
    { toolCalls: [{ name: "run_command", arguments: { command: "git push --force origin main" } }] },
    { content: "tried" },
  ]);
  const notices: string[] = [];
  const session = await createSession({
    ...options,
    sandbox: "local",
    commandPolicy: "none",
    onNotice: (t) => notices.push(t),
  });
  try {
    const result = await session.run("push it");
    assert.deepEqual(result.safety, {
      sandbox: "local",
      isolated: false,
      commandPolicy: "none",
      approval: "auto",
    });
    assert.ok(
      notices.some((n) => /does not isolate/.test(n)),
      notices.join("\n"),
    );
    // The command ran (and failed: no repository), rather than being refused.
    const tool = chat(server)[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
    assert.doesNotMatch(tool.content, /approval/);
    assert.match(tool.content, /exit code: 128|not a git repository/);
  } finally {
    await session.close();
  }
});

test("abort: the signal ends the run with status aborted, and the session stays usable", async () => {
  const { options } = await setup([{ content: "late", delayMs: 5_000 }, { content: "second" }]);
  const session = await createSession(options);
  try {
    const started = Date.now();
    const result = await session.run("slow", { signal: AbortSignal.timeout(300) });
    assert.equal(result.status, "aborted");
    assert.ok(Date.now() - started < 4_000, `took ${Date.now() - started} ms`);
    assert.equal((await session.run("again")).answer, "second");
  } finally {
    await session.close();
  }
});

test("structured output that never matches: status error, the reason, no output, retries bounded", async () => {
  const { server, options } = await setup([
    { content: "no JSON here" },
    { content: "[1]" },
    { content: '{"a":"x"}' },
  ]);
  const session = await createSession(options);
  try {
    const result = await session.run("give me a", {
      outputSchema: { type: "object", properties: { a: { type: "number" } }, required: ["a"] },
      outputRetries: 2,
    });
    assert.equal(result.status, "error");
    assert.equal(result.output, undefined);
    assert.equal(result.answer, '{"a":"x"}');
    assert.match(
      result.reason ?? "",
      /does not match the output schema after 3 attempts: \/a must be number/,
    );
    assert.equal(chat(server).length, 3);
  } finally {
    await session.close();
  }
});

test("stream: the iterator yields the run's events in order and result resolves to the same outcome", async () => {
  const { options } = await setup([{ content: "hi" }]);
  const session = await createSession(options);
  try {
    const run = session.stream("say hi");
    const seen: string[] = [];
    for await (const e of run) seen.push(e.type);
    assert.equal(seen[0], "run_start");
    assert.equal(seen.at(-1), "result");
    assert.equal((await run.result).answer, "hi");
  } finally {
    await session.close();
  }
});

test("resume: a new session with resume continues the saved conversation; the trace is where the CLI keeps it", async () => {
  const { server, options, home } = await setup([{ content: "the code word is plum" }, { content: "plum" }]);
  const first = await createSession(options);
  await first.run("remember: plum");
  await first.close();
  const second = await createSession({ ...options, resume: first.id });
  try {
    assert.equal(second.id, first.id);
    await second.run("what was the code word?");
  } finally {
    await second.close();
  }
  const sent = chat(server)[1]!
    .body.messages.map((m: { content: string }) => m.content)
    .join("\n");
  assert.match(sent, /remember: plum/);
  assert.match(sent, /the code word is plum/);
  const trace = readFileSync(join(home, "data", "traces", `${first.id}.jsonl`), "utf8")
    .trim()
    .split("\n");
  assert.equal(trace.filter((l) => JSON.parse(l).type === "result").length, 2);
  assert.ok(readdirSync(join(home, "data", "sessions")).some((f) => f.startsWith(first.id)));
  // Private to the user, as the CLI keeps it.
  assert.equal(statSync(join(home, "data")).mode & 0o777, 0o700);
  await assert.rejects(createSession({ ...options, resume: "no-such-session" }), SettingsError);
});

test("approve: the callback decides what the policy asks about; its reason reaches the model", async () => {
  const { server, options } = await setup([
    { toolCalls: [{ name: "run_command", arguments: { command: "git push --force origin main" } }] },
    { content: "ok" },
  ]);
  const asked: string[] = [];
  const session = await createSession({
    ...options,
    approval: "auto",
    approve: (r) => {
      asked.push(`${r.kind}:${r.command}`);
      return { answer: "no", reason: "not today" };
    },
  });
  try {
    await session.run("push");
  } finally {
    await session.close();
  }
  assert.deepEqual(asked, ["command:git push --force origin main"]);
  const tool = chat(server)[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
  assert.match(tool.content, /not today/);
});

test("openAgentMemory: memory for an Agent wired by hand assembles its context, answers recall, reports moves", async () => {
  const { server, workspace, home } = await setup([
    { toolCalls: [{ name: "list_dir", arguments: { path: "." } }] },
    { content: "done" },
  ]);
  const { Agent, builtinTools } = await import("@hands/agent");
  const { createProvider } = await import("@hands/llm");
  const provider = createProvider({
    provider: "openai",
    model: "scripted-model",
    baseURL: server.url,
    apiKey: "k",
  });
  const memory = await openAgentMemory({
    provider,
    workspace,
    dataDir: join(home, "data"),
    contextBudget: 4000,
  });
  const moves: string[] = [];
  try {
    const agent = new Agent({
      provider,
      workspace,
      tools: [...builtinTools(), memory.tool],
      ...memory.agentOptions(),
      createSandbox: async () => {
        throw new Error("no commands in this test");
      },
    });
    const result = await agent.run("look around", {
      onEvent: (e) => {
        if (e.type === "memory") moves.push(e.action);
      },
    });
    assert.equal(result.status, "done");
    await memory.learn("look around", result);
  } finally {
    await memory.close();
  }
  assert.ok(moves.includes("created"), moves.join(","));
  const names = chat(server)[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
  assert.ok(names.includes("recall"));
  assert.ok(existsSync(join(home, "data", "memory.db")));
});

test("no isolating sandbox on the machine: createSession refuses to fall back to running commands unisolated", async () => {
  const { options } = await setup([]);
  const sdk = new URL("./index.js", import.meta.url).href;
  const code = `import(${JSON.stringify(sdk)}).then(async ({ createSession }) => {
    const opts = ${JSON.stringify({ ...options, env: {} })};
    await createSession(opts).then(() => console.log("started"), (e) => console.log("refused: " + e.message));
    const local = await createSession({ ...opts, sandbox: "local", onNotice: (t) => console.log("notice: " + t) });
    console.log("local: " + JSON.stringify(local.safety));
    await local.close();
  });`;
  // No bubblewrap on the PATH: as on a machine without it.
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", code], {
    env: { PATH: "/nonexistent" },
  });
  assert.match(
    stdout,
    /^refused: no isolating sandbox is available here \(sandbox "local" does not isolate commands \(bubblewrap is not installed/m,
  );
  assert.match(stdout, /sandbox: "local" to run commands unisolated/);
  assert.match(stdout, /^notice: warning: sandbox "local" does not isolate/m);
  assert.match(
    stdout,
    /^local: \{"sandbox":"local","isolated":false,"commandPolicy":"builtin","approval":"auto"\}$/m,
  );
});
