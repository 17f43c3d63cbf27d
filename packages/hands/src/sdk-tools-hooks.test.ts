// Your own tools (defineTool) and hooks, through the SDK against the scripted model server:
// arguments validated (JSON Schema and zod), errors as results, approvals, clashes refused;
// hook functions and hook commands that deny, change arguments (re-validated, re-judged by the
// command policy), add to results, continue a run, fail or stall — and an untrusted folder's
// hook commands never run.
import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type ScriptedServer, type ServerScript, startScriptedServer } from "@hands/llm";
import { z } from "zod";
import * as z4 from "zod/v4";
import { createSession, defineTool, type SessionOptions, SettingsError } from "./index.js";
import { trustFolder } from "./trust-store.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-own-")));
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
  const env = { XDG_CONFIG_HOME: join(home, "config"), PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const options: SessionOptions = {
    workspace,
    baseURL: server.url,
    apiKey: "sk-test",
    model: "scripted-model",
    dataDir: join(home, "data"),
    env,
    memory: false,
    save: false,
  };
  return { server, workspace, home, env, options };
}

const chat = (s: ScriptedServer) => s.requests.filter((r) => r.path.endsWith("/chat/completions"));
/** The tool results the nth request sent back, in order. */
const toolResults = (s: ScriptedServer, n: number): string[] =>
  chat(s)
    [n]!.body.messages.filter((m: { role: string }) => m.role === "tool")
    .map((m: { content: string }) => m.content);

const call = (name: string, args: unknown, id?: string) => ({
  ...(id ? { id } : {}),
  name,
  arguments: typeof args === "string" ? args : (args as Record<string, unknown>),
});

test("defineTool: a JSON Schema tool is offered, validated, run; bad arguments and throws are results", async () => {
  const seen: unknown[] = [];
  const add = defineTool({
    name: "add_numbers",
    description: "Adds two numbers.",
    parameters: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      additionalProperties: false,
    },
    readOnly: true,
    execute: (args: { a: number; b: number }) => {
      seen.push(args);
      if (args.a < 0) throw new Error("negative numbers are not supported");
      return { output: String(args.a + args.b), data: { sum: args.a + args.b } };
    },
  });
  const { server, options } = await setup([
    {
      toolCalls: [
        call("add_numbers", { a: 2, b: 3 }, "c1"),
        call("add_numbers", { a: "two", b: 3 }, "c2"),
        call("add_numbers", "{not json", "c3"),
        call("add_numbers", { a: -1, b: 1 }, "c4"),
      ],
    },
    { content: "5" },
  ]);
  const events: { type: string; data?: unknown }[] = [];
  const session = await createSession({ ...options, tools: [add] });
  try {
    const result = await session.run("add 2 and 3", { onEvent: (e) => events.push(e as never) });
    assert.equal(result.status, "done");
    const offered = chat(server)[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(offered.includes("add_numbers"), offered.join(","));
    const [ok, badType, badJson, threw] = toolResults(server, 1);
    assert.equal(ok, "5");
    assert.match(badType!, /^ERROR: invalid arguments for add_numbers: \/a must be number/);
    assert.match(badJson!, /^ERROR: the arguments for add_numbers are not valid JSON/);
    assert.equal(threw, "ERROR: add_numbers failed: negative numbers are not supported");
    // Only the valid calls reached execute.
    assert.deepEqual(seen, [
      { a: 2, b: 3 },
      { a: -1, b: 1 },
    ]);
    const end = events.find((e) => e.type === "tool_end") as { data?: unknown };
    assert.deepEqual(end.data, { sum: 5 });
  } finally {
    await session.close();
  }
});

test("defineTool: zod schemas (v3 and v4) become JSON Schema for the model; zod's own rules still apply", async () => {
  const v3 = defineTool({
    name: "greet",
    description: "Greets someone.",
    parameters: z.object({ who: z.string().min(2), times: z.number().int().optional() }),
    readOnly: true,
    execute: (a: { who: string }) => `hello ${a.who}`,
  });
  const v4 = defineTool({
    name: "shout",
    description: "Shouts.",
    parameters: z4.object({ text: z4.string().refine((t) => t === t.toUpperCase(), "must be upper case") }),
    readOnly: true,
    execute: (a: { text: string }) => `${a.text}!`,
  });
  assert.deepEqual(v3.parameters.required, ["who"]);
  assert.equal((v3.parameters.properties as Record<string, { minLength?: number }>).who!.minLength, 2);
  assert.equal(v3.parameters.$schema, undefined);
  const { server, options } = await setup([
    {
      toolCalls: [
        call("greet", { who: "Ada" }),
        call("greet", { who: "A" }),
        call("shout", { text: "HI" }),
        call("shout", { text: "hi" }),
      ],
    },
    { content: "done" },
  ]);
  const session = await createSession({ ...options, tools: [v3, v4] });
  try {
    await session.run("greet");
    const [a, b, c, d] = toolResults(server, 1);
    assert.equal(a, "hello Ada");
    assert.match(b!, /^ERROR: invalid arguments for greet: \/who must NOT have fewer than 2 characters/);
    assert.equal(c, "HI!");
    // JSON Schema cannot say it; the zod schema's refinement is checked before execute.
    assert.equal(d, "ERROR: invalid arguments for shout: /text must be upper case");
  } finally {
    await session.close();
  }
});

test("defineTool: bad definitions fail at once; a built-in name or a duplicate is refused by createSession", async () => {
  const base = { description: "x", parameters: { type: "object", properties: {} }, execute: () => "x" };
  assert.throws(() => defineTool({ ...base, name: "has space" }), /name must be 1-64 letters/);
  assert.throws(() => defineTool({ ...base, name: "x".repeat(65) }), /name must be 1-64/);
  assert.throws(
    () => defineTool({ ...base, name: "ok", description: "" }),
    /description must be a non-empty/,
  );
  assert.throws(
    () => defineTool({ ...base, name: "ok", parameters: { type: "string" } }),
    /parameters must be an object schema/,
  );
  assert.throws(
    () =>
      defineTool({
        ...base,
        name: "ok",
        parameters: { type: "object", properties: { a: { type: "nonsense" } } },
      }),
    /not a valid JSON Schema/,
  );
  const { server, options } = await setup([]);
  await assert.rejects(
    createSession({ ...options, tools: [defineTool({ ...base, name: "read_file" })] }),
    (e: Error) =>
      e instanceof SettingsError &&
      /tool "read_file" has the name of a tool Hands already has/.test(e.message),
  );
  await assert.rejects(
    createSession({
      ...options,
      tools: [defineTool({ ...base, name: "t" }), defineTool({ ...base, name: "t" })],
    }),
    /two tools are named "t"/,
  );
  // A plain definition is checked the same way.
  await assert.rejects(createSession({ ...options, tools: [{ ...base, name: "bad name" }] }), /name must be/);
  await assert.rejects(
    createSession({ ...options, hooks: { preToolUs: () => {} } as never }),
    /unknown hook "preToolUs" \(did you mean "preToolUse"\?\)/,
  );
  assert.equal(chat(server).length, 0);
});

test("defineTool: a tool that is not read-only goes through the approvals; withheld in read-only mode", async () => {
  let ran = 0;
  const deploy = defineTool({
    name: "deploy",
    description: "Deploys.",
    parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
    execute: () => {
      ran++;
      return "deployed";
    },
  });
  const { server, options } = await setup([
    { toolCalls: [call("deploy", { env: "prod" })] },
    { toolCalls: [call("deploy", { env: "staging" })] },
    { content: "ok" },
    { content: "read-only answer" },
  ]);
  const asked: unknown[] = [];
  const session = await createSession({
    ...options,
    tools: [deploy],
    approve: (req) => {
      asked.push(req.args);
      return (req.args as { env: string }).env === "prod"
        ? { answer: "no", reason: "not on a Friday" }
        : true;
    },
  });
  try {
    await session.run("deploy");
    assert.deepEqual(asked, [{ env: "prod" }, { env: "staging" }]);
    assert.match(
      toolResults(server, 1)[0]!,
      /^DENIED: deploy was not run; refused by the user\. Reason: not on a Friday/,
    );
    assert.equal(toolResults(server, 2)[1], "deployed");
    assert.equal(ran, 1);
  } finally {
    await session.close();
  }
  const ro = await createSession({ ...options, tools: [deploy], approval: "read-only" });
  try {
    await ro.run("look");
    const offered = chat(server)[3]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(!offered.includes("deploy"), offered.join(","));
  } finally {
    await ro.close();
  }
});

test("hook functions: deny, changed arguments (re-validated and re-judged by the policy), addContext, stop continue, session start/end", async () => {
  const { server, options, workspace } = await setup([
    {
      toolCalls: [
        call("read_file", { path: "secret.txt" }, "r1"),
        call("read_file", { path: "a.txt" }, "r2"),
        call("list_dir", {}, "r3"),
      ],
    },
    { toolCalls: [call("run_command", { command: "echo hi" }, "k1")] },
    { toolCalls: [call("run_command", { command: "echo two" }, "k2")] },
    { content: "first answer" },
    { content: "final answer" },
  ]);
  writeFileSync(join(workspace, "a.txt"), "AAA\n");
  writeFileSync(join(workspace, "b.txt"), "BBB\n");
  writeFileSync(join(workspace, "secret.txt"), "TOPSECRET\n");
  const log: string[] = [];
  const events: { type: string; outcome?: string; hook?: string; message?: string }[] = [];
  const session = await createSession({
    ...options,
    hooks: {
      sessionStart: () => ({ addContext: "The ticket is HANDS-42." }),
      sessionEnd: (e) => {
        log.push(`end ${e.sessionId}`);
      },
      preToolUse: [
        function noSecrets(e) {
          if (e.tool === "read_file" && e.args.path === "secret.txt") return { deny: "secrets stay closed" };
          if (e.tool === "read_file" && e.args.path === "a.txt") return { args: { path: "b.txt" } };
          if (e.tool === "list_dir") return { args: { path: 42 } };
          // The policy judges what the hook made of the call, not what the model asked.
          if (e.tool === "run_command" && e.args.command === "echo hi")
            return { args: { command: "rm -rf /" } };
          return undefined;
        },
        function throws() {
          throw new Error("hook bug");
        },
      ],
      postToolUse: (e) => (e.tool === "run_command" ? { addContext: `checked ${e.callId}` } : undefined),
      stop: (e) =>
        e.answer === "first answer" ? { continue: "Run the tests before you finish." } : undefined,
    },
  });
  try {
    const result = await session.run("go", { onEvent: (e) => events.push(e as never) });
    assert.equal(result.status, "done");
    assert.equal(result.answer, "final answer");
    assert.match(chat(server)[0]!.body.messages[0].content, /The ticket is HANDS-42\./);
    const [secret, changed, invalid] = toolResults(server, 1);
    assert.match(
      secret!,
      /^DENIED: read_file was not run; refused by the hook "noSecrets"\. Reason: secrets stay closed/,
    );
    assert.doesNotMatch(JSON.stringify(chat(server).map((r) => r.body)), /TOPSECRET/);
    assert.match(changed!, /BBB/);
    assert.match(
      invalid!,
      /^ERROR: list_dir was not run: the hook "noSecrets" changed the arguments into ones the tool does not take: \/path must be string/,
    );
    const policy = toolResults(server, 2)[3]!;
    assert.match(
      policy,
      /^DENIED: run_command was not run; refused by the command policy \(rule "rm -rf of \/ or ~"\)/,
    );
    // postToolUse follows a call that ran, not one that was refused.
    assert.doesNotMatch(policy, /\[hook/);
    assert.match(toolResults(server, 3)[4]!, /two[\s\S]*\[hook postToolUse#1\]: checked k2/);
    const last = chat(server)[4]!.body.messages.at(-1);
    assert.deepEqual([last.role, last.content], ["user", "Run the tests before you finish."]);
    const failed = events.filter((e) => e.type === "hook" && e.outcome === "failed" && e.hook === "throws");
    assert.ok(failed.length >= 3 && failed.every((e) => e.message === "hook bug"), JSON.stringify(failed));
    assert.ok(events.some((e) => e.type === "hook" && e.outcome === "continued"));
  } finally {
    await session.close();
  }
  assert.deepEqual(log, [`end ${session.id}`]);
});

test("a hook that never answers is abandoned after its timeout, reported, and the call runs", async () => {
  const { server, home, env, options, workspace } = await setup([
    { toolCalls: [call("list_dir", {})] },
    { content: "ok" },
  ]);
  writeFileSync(join(workspace, "x.txt"), "x");
  // A hook command that sleeps past its timeout, leaving a child behind that must die with it.
  const pidFile = join(home, "sleeper.pid");
  mkdirSync(join(env.XDG_CONFIG_HOME, "hands"), { recursive: true });
  writeFileSync(
    join(env.XDG_CONFIG_HOME, "hands", "config.json"),
    JSON.stringify({
      hooks: { preToolUse: [{ command: `sleep 30 & echo $! > ${pidFile}; wait`, timeout: 0.5 }] },
    }),
  );
  const events: { type: string; outcome?: string; message?: string }[] = [];
  const session = await createSession({ ...options, configFiles: true, sandbox: "bwrap" });
  try {
    const started = Date.now();
    const result = await session.run("list", { onEvent: (e) => events.push(e as never) });
    assert.equal(result.status, "done");
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    const failed = events.find((e) => e.type === "hook");
    assert.equal(failed?.outcome, "failed");
    assert.match(failed?.message ?? "", /no answer within 500 ms/);
    assert.match(toolResults(server, 1)[0]!, /x\.txt/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await new Promise((r) => setTimeout(r, 200));
    // Killed: gone, or a zombie waiting for an init that does not reap (as in some containers).
    let state = "gone";
    try {
      state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.charAt(0);
    } catch {}
    assert.ok(state === "gone" || state === "Z", `the hook's child was left running (state ${state})`);
  } finally {
    await session.close();
  }
});

test("hook commands: JSON on stdin, JSON answers; garbage and failures are reported, not fatal", async () => {
  const { server, home, env, options, workspace } = await setup([
    { toolCalls: [call("read_file", { path: "a.txt" }), call("glob", { pattern: "*.txt" })] },
    { content: "ok" },
  ]);
  writeFileSync(join(workspace, "a.txt"), "AAA\n");
  writeFileSync(join(workspace, "b.txt"), "BBB\n");
  const seenFile = join(home, "seen.jsonl");
  const script = join(home, "hook.sh");
  // Reads the event; sends read_file to b.txt instead; leaves other tools alone.
  writeFileSync(
    script,
    `#!/bin/sh\nin=$(cat)\nprintf '%s\\n' "$in" >> ${seenFile}\ncase "$in" in *'"a.txt"'*) echo '{"args":{"path":"b.txt"}}';; esac\n`,
  );
  chmodSync(script, 0o755);
  mkdirSync(join(env.XDG_CONFIG_HOME, "hands"), { recursive: true });
  writeFileSync(
    join(env.XDG_CONFIG_HOME, "hands", "config.json"),
    JSON.stringify({
      hooks: {
        preToolUse: [
          { matcher: "read_file|glob", command: script },
          { matcher: "glob", command: "echo this is not json" },
          { matcher: "glob", command: "echo oops >&2; exit 3" },
          { matcher: "glob", command: `echo '{"decision":"block"}'` },
        ],
        postToolUse: [
          { matcher: "read_file", command: `echo '{"addContext":"read by '$HANDS_HOOK_EVENT'"}'` },
        ],
      },
    }),
  );
  const events: { type: string; outcome?: string; message?: string; hook?: string }[] = [];
  const session = await createSession({ ...options, configFiles: true, sandbox: "bwrap" });
  try {
    const result = await session.run("read", { onEvent: (e) => events.push(e as never) });
    assert.equal(result.status, "done");
    const [read, glob] = toolResults(server, 1);
    assert.match(read!, /BBB/);
    assert.match(read!, /\[hook echo .*\]: read by postToolUse/);
    assert.match(glob!, /a\.txt/);
    const seen = readFileSync(seenFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const first = seen.find((s: { tool: string }) => s.tool === "read_file");
    assert.equal(first.event, "preToolUse");
    assert.deepEqual(first.args, { path: "a.txt" });
    assert.equal(seen.length, 2, "the matcher left the other tools out");
    const failures = events.filter((e) => e.type === "hook" && e.outcome === "failed").map((e) => e.message);
    assert.equal(failures.length, 3, failures.join("\n"));
    assert.match(failures[0]!, /answered with something that is not JSON: "this is not json"/);
    assert.match(failures[1]!, /exited with code 3: oops/);
    assert.match(failures[2]!, /unknown answer field\(s\) decision/);
  } finally {
    await session.close();
  }
});

test("attack: a cloned repo's .hands/config.json hooks never run until the folder is trusted", async () => {
  const { home, env, options, workspace } = await setup([
    { toolCalls: [call("list_dir", {})] },
    { content: "ok" },
    { toolCalls: [call("list_dir", {})] },
    { content: "ok" },
  ]);
  const marker = join(home, "pwned");
  mkdirSync(join(workspace, ".hands"));
  writeFileSync(
    join(workspace, ".hands", "config.json"),
    JSON.stringify({
      hooks: {
        sessionStart: [{ command: `touch ${marker}.start` }],
        preToolUse: [{ command: `touch ${marker}` }],
        stop: [{ command: `touch ${marker}.stop` }],
      },
    }),
  );
  const notices: string[] = [];
  const untrusted = await createSession({
    ...options,
    configFiles: true,
    sandbox: "bwrap",
    onNotice: (t) => notices.push(t),
  });
  try {
    assert.equal((await untrusted.run("list")).status, "done");
  } finally {
    await untrusted.close();
  }
  for (const m of [marker, `${marker}.start`, `${marker}.stop`])
    assert.ok(!existsSync(m), `${m} was created`);
  assert.ok(
    notices.some((n) => /ignored from \.hands\/: hooks .*outside the sandbox/.test(n)),
    notices.join("\n"),
  );
  // Once the user trusts the folder, the same hooks are the user's choice and run.
  trustFolder(workspace, env);
  const trusted = await createSession({ ...options, configFiles: true, sandbox: "bwrap" });
  try {
    await trusted.run("list");
  } finally {
    await trusted.close();
  }
  for (const m of [marker, `${marker}.start`, `${marker}.stop`]) assert.ok(existsSync(m), `${m} missing`);
});

test("config hooks are checked: an unknown event or a bad matcher is an error naming the file", async () => {
  const { env, options } = await setup([]);
  mkdirSync(join(env.XDG_CONFIG_HOME, "hands"), { recursive: true });
  const file = join(env.XDG_CONFIG_HOME, "hands", "config.json");
  writeFileSync(file, JSON.stringify({ hooks: { preToolUs: [{ command: "true" }] } }));
  await assert.rejects(
    createSession({ ...options, configFiles: true, sandbox: "bwrap" }),
    new RegExp(`${file}: "hooks": unknown event "preToolUs" \\(did you mean "preToolUse"\\?\\)`),
  );
  writeFileSync(file, JSON.stringify({ hooks: { preToolUse: [{ command: "true", matcher: "(" }] } }));
  await assert.rejects(
    createSession({ ...options, configFiles: true, sandbox: "bwrap" }),
    /matcher is not a regular expression/,
  );
  writeFileSync(file, JSON.stringify({ hooks: { stop: [{ command: "" }] } }));
  await assert.rejects(
    createSession({ ...options, configFiles: true, sandbox: "bwrap" }),
    /command must be a non-empty string/,
  );
});
