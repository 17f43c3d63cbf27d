#!/usr/bin/env node
// The interactive session as a person meets it, in a real pseudo-terminal (util-linux
// `script`, 120×40): launch → an editable prompt (the editor's cursor drawn), for `hands`
// and for pi's interactive mode (@mariozechner/pi-coding-agent, installed into bench/.peers
// as bench/startup.mjs does), beside the one-shot launch (launch → first model request);
// keystroke → echo while a 10,000-token answer streams (each key a letter that appears nowhere
// else on the screen, timed until the terminal receives it); the process's CPU time per streamed
// chunk, and the markdown view's own render time per chunk (in process); the RSS of an idle
// session. Medians over --runs N (default 7) interleaved launches. `npm run bench:interactive`
// (--no-pi to leave pi out, --json for the figures as JSON).
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "./harness-run.mjs";
import { installPi, piAgentDir } from "./startup.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const HANDS_BIN = join(here, "..", "packages", "cli", "bin", "hands.js");
const COLS = 120;
const ROWS = 40;
/** The Editor's cursor at the end of an empty line (pi-tui, used by both programs). */
const CURSOR = "\x1b[7m \x1b[0m";
/** Keys typed while the answer streams: letters that appear nowhere else on the screen. */
const KEYS = "QXZJVWYGHKBNMRTUPLOD";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round = (x) => +x.toFixed(2);

/** A program in a pseudo-terminal of COLS×ROWS: what it writes, when, and a way to type. */
class Pty {
  constructor(argv, { cwd, env }) {
    const cmd = `stty cols ${COLS} rows ${ROWS}; exec ${argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ")}`;
    this.started = performance.now();
    this.child = spawn("script", ["-qfec", cmd, "/dev/null"], {
      cwd,
      env: { PATH: process.env.PATH, HOME: env.HOME, TERM: "xterm-256color", ...env },
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.out = "";
    this.waiters = [];
    this.child.stdout.on("data", (d) => {
      this.out += d.toString("utf8");
      const now = performance.now();
      this.waiters = this.waiters.filter((w) => {
        if (!w.test(this.out)) return true;
        w.resolve(now);
        return false;
      });
    });
  }

  /** Resolves to the time when `test(output)` first holds. */
  when(test, timeoutMs = 20_000) {
    if (test(this.out)) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const w = { test, resolve };
      this.waiters.push(w);
      setTimeout(
        () => reject(new Error(`timed out; output so far:\n${this.out.slice(-2000)}`)),
        timeoutMs,
      ).unref();
    });
  }

  type(s) {
    this.child.stdin.write(s);
  }

  /** The program's pid (script's child). */
  pid() {
    return Number(
      execFileSync("pgrep", ["-P", String(this.child.pid)], { encoding: "utf8" })
        .trim()
        .split("\n")[0],
    );
  }

  async close() {
    this.child.kill("SIGTERM");
    await new Promise((r) => (this.child.exitCode !== null ? r() : this.child.once("exit", r)));
  }
}

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? +(Number(m[1]) / 1024).toFixed(1) : Number.NaN;
}

function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
}

/**
 * An OpenAI-compatible endpoint: `answer` streamed in `chunks` pieces, `gapMs` apart. Every
 * request body is checked for what hands and pi send (a model, messages, stream).
 */
async function modelServer({ pieces = ["Done."], gapMs = 0 } = {}) {
  let firstRequestAt;
  let requests = 0;
  let sent = 0;
  let streaming = false;
  const invalid = [];
  const server = createServer((req, res) => {
    firstRequestAt ??= performance.now();
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "bench", object: "model" }] }));
        return;
      }
      requests++;
      try {
        const b = JSON.parse(body);
        if (b.model !== "bench" || !Array.isArray(b.messages) || b.stream !== true)
          invalid.push(body.slice(0, 200));
      } catch {
        invalid.push(body.slice(0, 200));
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (delta, finish = null) =>
        res.write(
          `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      send({ role: "assistant", content: "" });
      streaming = true;
      for (const p of pieces) {
        if (res.destroyed) break;
        send({ content: p });
        sent++;
        if (gapMs) await sleep(gapMs);
      }
      streaming = false;
      send({}, "stop");
      res.write(
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "bench", choices: [], usage: { prompt_tokens: 100, completion_tokens: 10_000, total_tokens: 10_100 } })}\n\n`,
      );
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    get firstRequestAt() {
      return firstRequestAt;
    },
    get requests() {
      return requests;
    },
    /** Pieces of the answer sent so far, and whether it is still streaming. */
    get sent() {
      return sent;
    },
    get streaming() {
      return streaming;
    },
    invalid,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** A fresh lower-case workspace (no capital letter anywhere on the screen but the typed ones). */
function workspace(name) {
  const ws = join(tmpdir(), `${name}-${process.pid}-${Math.floor(Math.random() * 1e6)}`);
  mkdirSync(ws, { recursive: true });
  return ws;
}

const handsArgs = (url, ws) => ["--base-url", url, "--model", "bench", "--api-key", "sk-bench", "--cwd", ws];

/** Launch → `ready` on the screen; with `idle`, also the RSS after a second there. Cleans up. */
async function promptReady(pty, model, ws, ready, idle) {
  try {
    const at = await pty.when(ready);
    let rss;
    if (idle) {
      await sleep(1000);
      rss = rssMb(pty.pid());
    }
    return { ms: at - pty.started, rss };
  } finally {
    await pty.close();
    await model.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

/** Launch → editable prompt of `hands`; with `idle`, also its RSS after a second at the prompt. */
async function handsStart({ idle = false } = {}) {
  const model = await modelServer();
  const ws = workspace("hands-ibench");
  const pty = new Pty([process.execPath, HANDS_BIN, ...handsArgs(model.url, ws)], {
    cwd: ws,
    env: { HOME: ws, HANDS_DATA_DIR: join(ws, ".data"), XDG_CONFIG_HOME: join(ws, ".config") },
  });
  return promptReady(pty, model, ws, (o) => o.includes("›") && o.includes(CURSOR), idle);
}

/** Launch → first model request of a one-shot `hands TASK`, in the same pty (same wrapper cost). */
async function handsOneShot() {
  const model = await modelServer();
  const ws = workspace("hands-ibench");
  const pty = new Pty(
    [process.execPath, HANDS_BIN, "--json", "--quiet", ...handsArgs(model.url, ws), "say done"],
    {
      cwd: ws,
      env: { HOME: ws, HANDS_DATA_DIR: join(ws, ".data"), XDG_CONFIG_HOME: join(ws, ".config") },
    },
  );
  try {
    const code = await new Promise((r) => pty.child.on("close", r));
    if (code !== 0 || model.requests !== 1 || model.invalid.length || !/"status":"done"/.test(pty.out))
      throw new Error(`one-shot hands failed (exit ${code}): ${pty.out.slice(-500)}`);
    return model.firstRequestAt - pty.started;
  } finally {
    await model.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

/** Launch → exit of `node -e 0` in the same pty: what any Node program pays first, on this machine now. */
async function nodeBaseline() {
  const pty = new Pty([process.execPath, "-e", "0"], { cwd: tmpdir(), env: { HOME: tmpdir() } });
  await new Promise((r) => pty.child.on("close", r));
  return performance.now() - pty.started;
}

/** Launch → editable prompt of pi's interactive mode, and its idle RSS. */
async function piStart(pi, { idle = false } = {}) {
  const model = await modelServer();
  const ws = workspace("pi-ibench");
  const agentDir = piAgentDir(ws, model.url);
  const pty = new Pty([pi, "--offline", "--provider", "bench", "--model", "bench"], {
    cwd: ws,
    env: { HOME: ws, PI_CODING_AGENT_DIR: agentDir },
  });
  return promptReady(pty, model, ws, (o) => o.includes(CURSOR), idle);
}

/** A 10,000-token answer in markdown (lower case only), in pieces of about four tokens. */
function longAnswer() {
  const words = "the quick brown fox jumps over a lazy dog while streaming tokens arrive one by one".split(
    " ",
  );
  const parts = [];
  let tokens = 0;
  let para = 0;
  while (tokens < 10_000) {
    para++;
    if (para % 7 === 0) {
      parts.push(
        `\n\`\`\`ts\nconst value${para} = compute(${para}); // step ${para}\nreturn value${para} + 1;\n\`\`\`\n\n`,
      );
      tokens += 24;
      continue;
    }
    if (para % 5 === 0) parts.push(`## section ${para}\n\n`);
    const sentence = Array.from({ length: 40 }, (_, i) =>
      i % 9 === 0 ? `**${words[(para + i) % words.length]}**` : words[(para + i) % words.length],
    ).join(" ");
    parts.push(`${sentence}.\n\n`);
    tokens += 44;
  }
  const text = parts.join("");
  // About four tokens (~16 characters) a piece, as models stream.
  const pieces = text.match(/[\s\S]{1,16}/g);
  return { text, pieces };
}

/** Keystroke → echo while the long answer streams, and the CPU the process spent per chunk. */
async function echoWhileStreaming() {
  const { pieces } = longAnswer();
  const model = await modelServer({ pieces, gapMs: 2 });
  const ws = workspace("hands-ibench");
  const pty = new Pty([process.execPath, HANDS_BIN, ...handsArgs(model.url, ws)], {
    cwd: ws,
    env: { HOME: ws, HANDS_DATA_DIR: join(ws, ".data"), XDG_CONFIG_HOME: join(ws, ".config") },
  });
  const echoes = [];
  try {
    await pty.when((o) => o.includes(CURSOR));
    const pid = pty.pid();
    pty.type("stream the long answer\r");
    await pty.when((o) => o.includes("quick brown"));
    const cpu0 = cpuMs(pid);
    const sent0 = model.sent;
    const t0 = performance.now();
    let k = 0;
    while (model.streaming && echoes.length < 300) {
      const key = KEYS[k % KEYS.length];
      if (k > 0 && k % KEYS.length === 0) {
        pty.type("\x15"); // Ctrl-U: the letters can be used again
        await sleep(20);
      }
      const from = pty.out.length;
      const sentAt = performance.now();
      pty.type(key);
      const seen = await pty.when((o) => o.indexOf(key, from) >= 0, 5000);
      echoes.push(seen - sentAt);
      k++;
      await sleep(25);
    }
    const cpu1 = cpuMs(pid);
    const wall = performance.now() - t0;
    const chunkCount = model.sent - sent0;
    return {
      keys: echoes.length,
      p50: round(percentile(echoes, 50)),
      p95: round(percentile(echoes, 95)),
      max: round(Math.max(...echoes)),
      cpuPerChunkMs: round((cpu1 - cpu0) / Math.max(1, chunkCount)),
      chunks: chunkCount,
      windowMs: Math.round(wall),
    };
  } finally {
    await pty.close();
    await model.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

/** The markdown view's own cost: append a chunk, render at 120 columns (in process). */
async function renderPerChunk() {
  const { AnswerBlock } = await import("../packages/cli/dist/interactive/tui/markdown.js");
  const { pieces } = longAnswer();
  const block = new AnswerBlock(true);
  const times = [];
  for (const p of pieces) {
    block.append(p);
    const t = performance.now();
    block.render(COLS);
    times.push(performance.now() - t);
  }
  block.finish();
  const tail = times.slice(-200);
  return {
    chunks: pieces.length,
    meanMs: round(times.reduce((a, b) => a + b, 0) / times.length),
    p95Ms: round(percentile(times, 95)),
    last200MeanMs: round(tail.reduce((a, b) => a + b, 0) / tail.length),
  };
}

export async function measureInteractive({ runs = 7, pi = true } = {}) {
  const piBin = pi ? installPi() : undefined;
  const load = loadavg()[0];
  // Warm the file cache once; not counted.
  await handsStart();
  await handsOneShot();
  if (piBin) await piStart(piBin);
  const s = { hands: [], oneShot: [], pi: [], handsRss: [], piRss: [], node: [] };
  for (let i = 0; i < runs; i++) {
    const h = await handsStart({ idle: i < 3 });
    s.hands.push(h.ms);
    if (h.rss) s.handsRss.push(h.rss);
    s.oneShot.push(await handsOneShot());
    s.node.push(await nodeBaseline());
    if (piBin) {
      const p = await piStart(piBin, { idle: i < 3 });
      s.pi.push(p.ms);
      if (p.rss) s.piRss.push(p.rss);
    }
  }
  const echo = await echoWhileStreaming();
  const render = await renderPerChunk();
  const m = (xs) => (xs.length ? round(median(xs)) : undefined);
  return {
    runs,
    promptMs: { hands: m(s.hands), pi: m(s.pi), handsOneShotFirstRequest: m(s.oneShot), nodeExit: m(s.node) },
    samplesMs: { hands: s.hands.map(round), pi: s.pi.map(round), oneShot: s.oneShot.map(round) },
    handsOverOneShot: round(median(s.hands) / median(s.oneShot)),
    ...(s.pi.length ? { handsOverPi: round(median(s.hands) / median(s.pi)) } : {}),
    idleRssMb: { hands: m(s.handsRss), pi: m(s.piRss) },
    echoWhileStreaming: echo,
    markdownRenderPerChunk: render,
    loadAverage: [round(load), round(loadavg()[0])],
  };
}

export function printInteractive(r) {
  console.log(`interactive start, median of ${r.runs} interleaved launches in a ${COLS}×${ROWS} pty:`);
  console.log(`  hands → editable prompt        ${String(r.promptMs.hands).padStart(8)} ms   (goal ≤ 250)`);
  console.log(
    `  hands one-shot → 1st request   ${String(r.promptMs.handsOneShotFirstRequest).padStart(8)} ms`,
  );
  console.log(`  hands prompt / one-shot        ${String(r.handsOverOneShot).padStart(8)}      (goal ≤ 1.5)`);
  console.log(
    `  node -e 0 → exit               ${String(r.promptMs.nodeExit).padStart(8)} ms   (the machine's floor)`,
  );
  if (r.promptMs.pi !== undefined) {
    console.log(`  pi → editable prompt           ${String(r.promptMs.pi).padStart(8)} ms`);
    console.log(`  hands / pi                     ${String(r.handsOverPi).padStart(8)}`);
  }
  console.log(
    `  idle RSS: hands ${r.idleRssMb.hands} MB${r.idleRssMb.pi !== undefined ? `, pi ${r.idleRssMb.pi} MB` : ""}`,
  );
  const e = r.echoWhileStreaming;
  console.log(
    `  keystroke → echo while a 10,000-token answer streams: p50 ${e.p50} ms, p95 ${e.p95} ms (goal ≤ 16), max ${e.max} ms, ${e.keys} keys`,
  );
  console.log(
    `  process CPU per streamed chunk: ${e.cpuPerChunkMs} ms (${e.chunks} chunks in ${e.windowMs} ms)`,
  );
  const d = r.markdownRenderPerChunk;
  console.log(
    `  markdown view render per chunk (in process, ${d.chunks} chunks): mean ${d.meanMs} ms, p95 ${d.p95Ms} ms, last 200 mean ${d.last200MeanMs} ms`,
  );
  console.log(`  load average, start/end: ${r.loadAverage.join(" / ")}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
  const r = await measureInteractive({
    runs: Number(opt("--runs") ?? 7) || 7,
    pi: !argv.includes("--no-pi"),
  });
  if (argv.includes("--json")) console.log(JSON.stringify(r));
  else printInteractive(r);
}
