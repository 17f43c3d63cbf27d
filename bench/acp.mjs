#!/usr/bin/env node
// `hands acp` as an editor sees it: the time from sending session/prompt to the first
// session/update, and what each streamed update costs. The real bin as a subprocess, the
// official ACP SDK's client side as the editor, the repo's scripted model server on loopback
// (in this process, so its clock is the editor's).
// Per prompt (a session's first, and later ones): prompt → the model request arriving (Hands'
// own work before the model), the request → the first update, and prompt → first update.
// Streaming: a reply of PIECES text deltas sent at once. Text that streams in while an update
// is being written joins the queued one, so the pieces arrive as fewer updates (counted). The
// span first → last update / pieces is the wall time per piece; the agent process's CPU
// (utime+stime from /proc) over the prompt / updates is its CPU per update, and that CPU minus
// a one-piece prompt's, / pieces, the marginal CPU per piece. The reference: the same reply
// through `hands --json`, its marginal CPU per piece (a run of PIECES pieces minus a run of
// one, from bash's `time`): the same session and stream without ACP.
// `node bench/acp.mjs [--runs N] [--pieces N] [--json]`
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { scriptedModelFlags } from "../packages/cli/dist/testing/cli-process.js";
import { startScriptedServer } from "../packages/llm/dist/index.js";
import { median } from "./harness-run.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, "..", "packages", "cli", "bin", "hands.js");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = arg("--runs", 7);
const PIECES = arg("--pieces", 2000);
const CHUNK = 4;
const round = (x) => +x.toFixed(3);

const scratch = mkdtempSync(join(tmpdir(), "hands-bench-acp-"));
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|ANTHROPIC_|HANDS_)/.test(k))),
  HANDS_DATA_DIR: join(scratch, "data"),
  XDG_CONFIG_HOME: join(scratch, "config"),
  XDG_CACHE_HOME: join(scratch, "cache"),
  NO_COLOR: "1",
};
const ws = mkdtempSync(join(scratch, "ws-"));

/** CPU seconds (user + system) of a process so far. */
function cpuOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

const arrivals = [];
let nextTurn = () => ({ content: "ok" });
const model = await startScriptedServer((req) => {
  if (req.path.endsWith("/chat/completions")) arrivals.push(performance.now());
  return nextTurn();
});
const flags = scriptedModelFlags(model);
const longText = "word ".repeat((PIECES * CHUNK) / 5).slice(0, PIECES * CHUNK);

async function acpFigures() {
  const child = spawn(process.execPath, [BIN, "acp", ...flags], { env, stdio: ["pipe", "pipe", "ignore"] });
  let onUpdate = () => {};
  const app = client({ name: "bench-editor" }).onNotification(methods.client.session.update, ({ params }) =>
    onUpdate(params),
  );
  const conn = app.connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  const agent = conn.agent;
  await agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  const firsts = { total: [], beforeModel: [], modelToUpdate: [] };
  const firstOfSession = [];
  for (let run = 0; run < RUNS; run++) {
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    for (let turn = 0; turn < 3; turn++) {
      nextTurn = () => ({ content: "A short answer." });
      let first;
      onUpdate = () => {
        first ??= performance.now();
      };
      const before = arrivals.length;
      const sent = performance.now();
      const r = await agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: `question ${run}.${turn}` }],
      });
      if (r.stopReason !== "end_turn" || first === undefined || arrivals.length !== before + 1)
        throw new Error(`unexpected prompt outcome ${JSON.stringify(r)}`);
      const arrived = arrivals[before];
      (turn === 0 ? firstOfSession : firsts.total).push(first - sent);
      if (turn > 0) {
        firsts.beforeModel.push(arrived - sent);
        firsts.modelToUpdate.push(first - arrived);
      }
    }
  }
  // Streaming: PIECES deltas at once, each one update.
  const perPiece = [];
  const updates = [];
  const cpuPerUpdate = [];
  const marginal = [];
  for (let run = 0; run < RUNS; run++) {
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    nextTurn = () => ({ content: longText, chunkSize: CHUNK });
    const times = [];
    let chars = 0;
    onUpdate = (p) => {
      if (p.update.sessionUpdate !== "agent_message_chunk") return;
      times.push(performance.now());
      chars += p.update.content.text.length;
    };
    const cpu0 = cpuOf(child.pid);
    await agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "stream" }],
    });
    const cpu = cpuOf(child.pid) - cpu0;
    if (chars !== longText.length) throw new Error(`got ${chars} characters of ${longText.length}`);
    onUpdate = () => {};
    // The same prompt with a one-piece reply: what a prompt costs apart from its pieces.
    nextTurn = () => ({ content: "word" });
    const { sessionId: other } = await agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const cpu1 = cpuOf(child.pid);
    await agent.request(methods.agent.session.prompt, {
      sessionId: other,
      prompt: [{ type: "text", text: "stream" }],
    });
    marginal.push(((cpu - (cpuOf(child.pid) - cpu1)) * 1000) / (PIECES - 1));
    updates.push(times.length);
    perPiece.push((times.at(-1) - times[0]) / (PIECES - 1));
    cpuPerUpdate.push((cpu * 1000) / times.length);
  }
  child.stdin.end();
  await new Promise((r) => child.on("close", r));
  return {
    firstUpdateFirstPromptMs: median(firstOfSession),
    firstUpdateMs: median(firsts.total),
    promptToModelRequestMs: median(firsts.beforeModel),
    modelRequestToFirstUpdateMs: median(firsts.modelToUpdate),
    updatesForPieces: median(updates),
    wallFirstToLastPerPieceMs: median(perPiece),
    cpuPerUpdateMs: median(cpuPerUpdate),
    marginalCpuPerPieceMs: median(marginal),
  };
}

/** CPU seconds of one `hands --json` run of `content` (bash's `time`: user + sys). */
async function oneShotCpu(content) {
  nextTurn = () => ({ content, chunkSize: CHUNK });
  const cmd = [process.execPath, BIN, "--json", "--quiet", "--cwd", ws, ...flags, "stream"]
    .map((a) => `'${a}'`)
    .join(" ");
  const child = spawn("bash", ["-c", `TIMEFORMAT='%U %S'; time ${cmd} >/dev/null 2>/dev/null`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => {
    err += d;
  });
  await new Promise((r) => child.on("close", r));
  const [u, sys] = err.trim().split("\n").at(-1).split(" ").map(Number);
  return u + sys;
}

/** The marginal CPU of a streamed piece without ACP: `hands --json` with PIECES pieces minus one piece. */
async function jsonFigures() {
  const per = [];
  for (let run = 0; run < RUNS; run++) {
    const long = await oneShotCpu(longText);
    const short = await oneShotCpu("word");
    per.push(((long - short) * 1000) / (PIECES - 1));
  }
  return { jsonMarginalCpuPerDeltaMs: median(per) };
}

try {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  const acp = await acpFigures();
  const json = await jsonFigures();
  const out = {
    runs: RUNS,
    pieces: PIECES,
    loadBefore: load,
    loadAfter: loadavg()
      .map((x) => x.toFixed(2))
      .join(" "),
  };
  for (const [k, v] of Object.entries({ ...acp, ...json })) out[k] = round(v);
  if (process.argv.includes("--json")) console.log(JSON.stringify(out));
  else for (const [k, v] of Object.entries(out)) console.log(`${k.padEnd(30)} ${v}`);
  await model.close();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
