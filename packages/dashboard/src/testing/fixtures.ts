// A data folder made by real scripted runs of the `hands` CLI: a finished run with file and
// command tools and a tool error (memory on, the default), a run whose model keeps failing
// (retries, then error), a run with a capped command output, a copy of a real trace damaged the
// ways a crash or another version damages one, and two `npm run eval` runs of one task.

import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ServerTurn, startScriptedServer } from "@hands/llm";
import { handsEnv, runHands } from "./hands-cli.js";

export interface Fixtures {
  scratch: string;
  dataDir: string;
  /** Trace ids (file names without .jsonl). */
  fib: string;
  failing: string;
  bigOutput: string;
  damaged: string;
  /** The fib trace as an older Hands wrote it: without the messages each request sent. */
  old: string;
  /** The messages of each chat request the model server got (OpenAI wire format), of fib and bigOutput. */
  fibRequests: WireMessage[][];
  bigRequests: WireMessage[][];
  /** A routed run (executor gpt-4.1-mini) whose task call ran a sub-agent (gpt-4.1-nano), and that child's trace. */
  routed: string;
  routedChild: string;
  /** Eval tasks recorded by `npm run eval` (evals/run.mjs): one passing run, then one failing. */
  evalTask: string;
}

export interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

const chatRequests = (server: { requests: { path: string; body: any }[] }): WireMessage[][] =>
  server.requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body.messages);

export const FIB_TASK = "create fib.py that prints fib(10), run it, tell me the output";

const FIB: ServerTurn[] = [
  {
    content: "I will write fib.py.",
    toolCalls: [
      {
        name: "write_file",
        arguments: {
          path: "fib.py",
          content: "a, b = 0, 1\nfor _ in range(10):\n    a, b = b, a + b\nprint(a)\n",
        },
      },
    ],
  },
  { content: "", toolCalls: [{ name: "run_command", arguments: { command: "python3 fib.py" } }] },
  // A tool the CLI does not have: the step shows a tool error the model could read.
  { content: "", toolCalls: [{ name: "no_such_tool", arguments: { why: "a tool error on the timeline" } }] },
  { content: "fib(10) is 55." },
];

/** The trace file names now in the data folder. */
function traces(dataDir: string): Set<string> {
  try {
    return new Set(readdirSync(join(dataDir, "traces")));
  } catch {
    return new Set();
  }
}

/** Runs `hands` and returns the id of the trace it wrote. */
async function traced(scratch: string, run: () => Promise<unknown>): Promise<string> {
  const dataDir = join(scratch, "data");
  const before = traces(dataDir);
  await run();
  const added = [...traces(dataDir)].filter((n) => !before.has(n));
  if (added.length !== 1) throw new Error(`expected one new trace, found ${added.length}`);
  return added[0]!.replace(/\.jsonl$/, "");
}

const EVALS = fileURLToPath(new URL("../../../../evals/", import.meta.url));

/** `node evals/run.mjs --task NAME` against the task's own script (pass) or a model that does nothing (fail). */
async function runEvals(scratch: string, task: string, outcome: "pass" | "fail"): Promise<void> {
  const script = JSON.parse(readFileSync(join(EVALS, "tasks", task, "script.json"), "utf8")) as ServerTurn[];
  const server = await startScriptedServer(
    outcome === "pass" ? script : [{ content: "I did it (but did nothing)." }],
  );
  const child = spawn(
    process.execPath,
    [
      join(EVALS, "run.mjs"),
      "--task",
      task,
      "--base-url",
      server.url,
      "--model",
      "scripted-model",
      "--api-key",
      "sk-test",
    ],
    { env: handsEnv(scratch), stdio: ["ignore", "pipe", "pipe"] },
  );
  let err = "";
  child.stderr?.on("data", (d) => {
    err += d;
  });
  const code = await new Promise((r) => child.on("close", r));
  await server.close();
  if (code !== (outcome === "pass" ? 0 : 1))
    throw new Error(`evals/run.mjs (${outcome}) exited ${code}: ${err}`);
}

export async function makeFixtures(scratch: string): Promise<Fixtures> {
  const dataDir = join(scratch, "data");
  const server = await startScriptedServer(FIB);
  const fib = await traced(scratch, () =>
    runHands([FIB_TASK], { scratch, modelUrl: server.url, workspace: join(scratch, "ws-fib") }),
  );
  const fibRequests = chatRequests(server);
  await server.close();

  const failingServer = await startScriptedServer((_req, i) =>
    i === 0
      ? { content: "", toolCalls: [{ name: "list_dir", arguments: {} }] }
      : { status: 500, errorMessage: "upstream exploded" },
  );
  const failing = await traced(scratch, () =>
    runHands(["list the files, then explain them"], {
      scratch,
      modelUrl: failingServer.url,
      workspace: join(scratch, "ws-failing"),
      expectCode: 1,
    }),
  );
  await failingServer.close();

  const bigServer = await startScriptedServer([
    { content: "", toolCalls: [{ name: "run_command", arguments: { command: "seq 1 60000" } }] },
    { content: "It printed the numbers 1 to 60000." },
  ]);
  const bigOutput = await traced(scratch, () =>
    runHands(["print the numbers 1 to 60000"], {
      scratch,
      modelUrl: bigServer.url,
      workspace: join(scratch, "ws-big"),
    }),
  );
  const bigRequests = chatRequests(bigServer);
  await bigServer.close();

  // A real trace cut by a crash, with a garbage line and an event of a later version.
  const damaged = `${fib}-damaged`;
  const src = join(dataDir, "traces", `${fib}.jsonl`);
  const dst = join(dataDir, "traces", `${damaged}.jsonl`);
  copyFileSync(src, dst);
  const lines = readFileSync(dst, "utf8").trimEnd().split("\n");
  const kept = lines.slice(0, -2);
  kept.splice(3, 0, "this is not json", JSON.stringify({ type: "hologram", time: Date.now(), step: 1 }));
  writeFileSync(dst, `${kept.join("\n")}\n${lines[lines.length - 2]!.slice(0, 40)}`);
  // Crashed an hour ago: no longer taken for a running run.
  const past = new Date(Date.now() - 3600_000);
  utimesSync(dst, past, past);
  // What a trace from before the messages were recorded looks like: no message lines, no `sent`.
  const old = `${fib}-old`;
  const oldLines = readFileSync(src, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e.type !== "message")
    .map(({ sent: _sent, ...e }) => JSON.stringify(e));
  writeFileSync(join(dataDir, "traces", `${old}.jsonl`), `${oldLines.join("\n")}\n`);
  // Model routing and a sub-agent: the parent's steps go to the executor, the child's to the
  // subagent model; token counts are scripted, so each model's list-price cost is known.
  const routedServer = await startScriptedServer((req): ServerTurn => {
    const child = /You are a sub-agent/.test(String(req.body.messages[0]?.content ?? ""));
    if (child) return { content: "a.txt holds AAA.", usage: { inputTokens: 2000, outputTokens: 100 } };
    const answered = req.body.messages.some((m: { role: string }) => m.role === "tool");
    return answered
      ? { content: "The child read a.txt: AAA.", usage: { inputTokens: 3000, outputTokens: 50 } }
      : {
          content: "",
          toolCalls: [{ name: "task", arguments: { prompt: "read a.txt and say what it holds" } }],
          usage: { inputTokens: 1000, outputTokens: 30 },
        };
  });
  const wsRouted = join(scratch, "ws-routed");
  mkdirSync(wsRouted, { recursive: true });
  writeFileSync(join(wsRouted, "a.txt"), "AAA\n");
  const beforeRouted = traces(dataDir);
  await runHands(
    [
      "--model",
      "gpt-4.1-mini",
      "--models",
      "executor=gpt-4.1-mini,subagent=gpt-4.1-nano",
      "--subagents",
      "read a.txt with a sub-agent",
    ],
    { scratch, modelUrl: routedServer.url, workspace: wsRouted },
  );
  await routedServer.close();
  const addedRouted = [...traces(dataDir)]
    .filter((n) => !beforeRouted.has(n))
    .map((n) => n.replace(/\.jsonl$/, ""));
  const routedChild = addedRouted.find((n) => /\.task-[0-9a-f]{8}$/.test(n));
  const routed = addedRouted.find((n) => n !== routedChild);
  if (!routed || !routedChild || addedRouted.length !== 2)
    throw new Error(`expected a routed trace and its child's, found ${addedRouted.join(", ")}`);
  const evalTask = "hello";
  await runEvals(scratch, evalTask, "pass");
  await runEvals(scratch, evalTask, "fail");
  return {
    scratch,
    dataDir,
    fib,
    failing,
    bigOutput,
    damaged,
    old,
    fibRequests,
    bigRequests,
    routed,
    routedChild,
    evalTask,
  };
}
