// The SDK examples (examples/*.mjs) run as a user runs them — `node examples/x.mjs` — against
// the scripted model server (which checks every request body), with the model configured
// through the environment. Each test checks what the example printed, what the model was
// sent and what happened on disk.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type RecordedHttpRequest, type ServerScript, startScriptedServer } from "@hands/llm";

const ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-examples-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface ExampleRun {
  code: number | null;
  stdout: string;
  stderr: string;
  requests: RecordedHttpRequest[];
  workspace: string;
}

/** The machine's environment without its model settings; the model and the data under `home`. */
function modelEnv(home: string, url: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(OPENAI_|ANTHROPIC_|HANDS_)/.test(k)) env[k] = v;
  return {
    ...env,
    HOME: home,
    HANDS_DATA_DIR: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    OPENAI_BASE_URL: url,
    OPENAI_API_KEY: "sk-example",
    HANDS_MODEL: "scripted-model",
  };
}

/** Runs examples/<name> with `args` (then the workspace it is given) against `script`. */
async function runExample(
  name: string,
  script: ServerScript,
  args: string[] = [],
  prepare?: (workspace: string) => void,
): Promise<ExampleRun> {
  const server = await startScriptedServer(script);
  const home = mkdtempSync(join(scratch, "home-"));
  const workspace = join(home, "ws");
  mkdirSync(workspace);
  prepare?.(workspace);
  const env = modelEnv(home, server.url);
  try {
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [join(ROOT, "examples", name), ...args, workspace],
        { cwd: ROOT, env, timeout: 60_000 },
        (err, stdout, stderr) =>
          done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    return {
      ...out,
      requests: server.requests.filter((r) => r.path.endsWith("/chat/completions")),
      workspace,
    };
  } finally {
    await server.close();
  }
}

const lastUserText = (r: RecordedHttpRequest) =>
  String([...r.body.messages].reverse().find((m: { role: string }) => m.role === "user")?.content ?? "");
const toolResults = (r: RecordedHttpRequest) =>
  (r.body.messages as { role: string; content: string }[])
    .filter((m) => m.role === "tool")
    .map((m) => m.content);

test("one-task.mjs: runs the task in the bubblewrap sandbox and says so", async () => {
  const run = await runExample("one-task.mjs", [
    {
      toolCalls: [
        { name: "run_command", arguments: { command: "printf 'hello from Hands' > hello.txt; echo $$" } },
      ],
    },
    { content: "I created hello.txt." },
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^status: done$/m);
  assert.match(run.stdout, /^answer: I created hello\.txt\.$/m);
  assert.match(run.stdout, /^sandbox: bwrap \(isolated: true\)$/m);
  assert.equal(readFileSync(join(run.workspace, "hello.txt"), "utf8"), "hello from Hands");
  assert.equal(run.requests.length, 2);
  assert.equal(run.requests[0]!.body.model, "scripted-model");
  // The command ran in its own PID namespace: its shell is a low PID there, not the host's.
  const pid = Number(/^(\d+)$/m.exec(toolResults(run.requests[1]!)[0] ?? "")?.[1]);
  assert.ok(pid > 0 && pid < 10, `the command's shell had PID ${pid}`);
});

test("stream-events.mjs: prints the run's events as they come, the same types hands --json prints", async () => {
  const script = [
    { toolCalls: [{ name: "list_dir", arguments: { path: "." } }] },
    { content: "There is one file, notes.md." },
  ];
  const run = await runExample("stream-events.mjs", script, ["List the files."], (ws) =>
    writeFileSync(join(ws, "notes.md"), "# Notes\n"),
  );
  assert.equal(run.code, 0, run.stderr);
  const events = run.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
  const types = events.map((e) => e.type);
  assert.equal(types[0], "run_start");
  assert.equal(types.at(-1), "result");
  for (const t of ["model_request", "model_response", "tool_start", "tool_end"])
    assert.ok(types.includes(t), t);
  const end = events.find((e) => e.type === "tool_end")!;
  assert.equal(end.name, "list_dir");
  assert.match(String(end.output), /notes\.md/);
  const result = events.at(-1)!;
  assert.equal(result.status, "done");
  assert.equal(result.answer, "There is one file, notes.md.");
  assert.equal(lastUserText(run.requests[0]!), "List the files.");
  // The same run through the CLI's --json: the same sequence of event types.
  const cli = await runCliJson(script, "List the files.");
  assert.deepEqual(
    types,
    cli.filter((t) => t !== "text_delta" && t !== "thinking_delta"),
  );
});

/** `hands --json TASK` against `script`: the types of the events it printed. */
async function runCliJson(script: ServerScript, task: string): Promise<string[]> {
  const server = await startScriptedServer(script);
  const home = mkdtempSync(join(scratch, "cli-"));
  const ws = join(home, "ws");
  mkdirSync(ws);
  writeFileSync(join(ws, "notes.md"), "# Notes\n");
  const env = modelEnv(home, server.url);
  try {
    const stdout = await new Promise<string>((done, fail) =>
      execFile(
        process.execPath,
        [join(ROOT, "packages/cli/bin/hands.js"), "--json", task],
        { cwd: ws, env },
        (err, out, errText) => (err ? fail(new Error(`${err.message}\n${errText}`)) : done(out)),
      ),
    );
    return stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { type: string }).type);
  } finally {
    await server.close();
  }
}

test("structured-output.mjs: a non-matching answer goes back with the errors; the matching one is the output", async () => {
  const run = await runExample(
    "structured-output.mjs",
    [
      { toolCalls: [{ name: "list_dir", arguments: { path: "." } }] },
      { content: "There is one file: notes.md" },
      { content: '```json\n{"files": ["notes.md"], "count": "one"}\n```' },
      { content: '{"files": ["notes.md"], "count": 1}' },
    ],
    [],
    (ws) => writeFileSync(join(ws, "notes.md"), "# Notes\n"),
  );
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { files: ["notes.md"], count: 1 });
  assert.equal(run.requests.length, 4);
  // The model was given the schema, then told exactly what was wrong each time.
  assert.match(lastUserText(run.requests[0]!), /JSON Schema[\s\S]*"required":\["files","count"\]/);
  assert.match(lastUserText(run.requests[2]!), /not JSON/);
  assert.match(lastUserText(run.requests[3]!), /\/count must be integer/);
});

test("approvals.mjs: the callback allows the write and refuses the command, with the reason the model reads", async () => {
  const run = await runExample("approvals.mjs", [
    { toolCalls: [{ name: "write_file", arguments: { path: "TODO.md", content: "- a\n- b\n- c\n" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "make test > ran.txt" } }] },
    { content: "Wrote TODO.md; I was not allowed to run make test." },
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^allowed write: TODO\.md$/m);
  assert.match(run.stdout, /^refused command: make test > ran\.txt$/m);
  assert.match(run.stdout, /^status: done$/m);
  assert.equal(readFileSync(join(run.workspace, "TODO.md"), "utf8"), "- a\n- b\n- c\n");
  assert.ok(!existsSync(join(run.workspace, "ran.txt")), "the refused command did not run");
  const refused = toolResults(run.requests[2]!).at(-1) ?? "";
  assert.match(refused, /this example runs no commands/);
});
