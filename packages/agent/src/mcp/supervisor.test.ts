// MCP servers that misbehave: they crash at start or mid-call, hang before `initialize`,
// block their own event loop, spam stderr, notifications and stdout. Each is a real process
// speaking the real protocol (testdata/), and each failure must reach the model as a clear
// ERROR observation and the user as a notice, without leaving a process behind.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { makeTestContext } from "../tools/test-context.js";
import type { Tool } from "../tools/types.js";
import { connectMcpServers, type McpConnection, parseMcpServers } from "./client.js";
import type { McpServerConfig } from "./config.js";

const testdata = (f: string) => fileURLToPath(new URL(`../../testdata/${f}`, import.meta.url));
const UNRULY = testdata("mcp-unruly-server.mjs");
const SILENT = testdata("mcp-silent-server.mjs");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitUntil(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await sleep(20);
  }
}

let open: McpConnection[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(open.map((c) => c.close()));
  open = [];
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "hands-mcp-"));
  dirs.push(d);
  return d;
}

async function connect(servers: Record<string, McpServerConfig>, notices: string[] = []) {
  const conn = await connectMcpServers(servers, { onNotice: (m) => notices.push(m), restartDelayMs: 20 });
  open.push(conn);
  return conn;
}

function unruly(extra: Partial<McpServerConfig> & { env?: Record<string, string> } = {}): McpServerConfig {
  return { command: process.execPath, args: [UNRULY], ...extra };
}

const toolOf = (conn: McpConnection, name: string): Tool => {
  const t = conn.tools.find((x) => x.name === name);
  assert.ok(t, `no tool ${name} in ${conn.tools.map((x) => x.name).join(", ")}`);
  return t;
};

describe("MCP supervisor", () => {
  const { ctx } = makeTestContext({ workspace: tmpdir() });

  test("a server that fails to start is reported with the last lines of its stderr, capped", async () => {
    const started = Date.now();
    const conn = await connect({
      ok: unruly(),
      broken: unruly({ env: { MCP_UNRULY_START: "crash" } }),
      missing: { command: "/nonexistent/mcp-server" },
    });
    assert.deepEqual(conn.servers, [{ name: "ok", tools: 7 }]);
    assert.equal(conn.errors.length, 2);
    const broken = conn.errors.find((e) => e.startsWith("MCP server broken:"))!;
    assert.match(broken, /exited with code 1 before it was ready/);
    assert.match(broken, /\| Error: cannot open the database: permission denied/);
    // The last 20 lines: the early ones are left out.
    assert.match(broken, /\| boot line 30\n/);
    assert.doesNotMatch(broken, /boot line 5\n/);
    assert.ok(broken.split("\n").filter((l) => l.startsWith("  | ")).length <= 20);
    const missing = conn.errors.find((e) => e.startsWith("MCP server missing:"))!;
    assert.match(
      missing,
      /could not start "\/nonexistent\/mcp-server": spawn \/nonexistent\/mcp-server ENOENT/,
    );
    assert.ok(Date.now() - started < 5_000);
  });

  test("a server that never answers initialize is reported after the bounded wait and killed", async () => {
    const pidFile = join(tempDir(), "pid");
    const started = Date.now();
    const conn = await connect({
      silent: {
        command: process.execPath,
        args: [SILENT],
        env: { MCP_SILENT_PIDFILE: pidFile },
        startupTimeoutMs: 400,
      },
    });
    const waited = Date.now() - started;
    assert.deepEqual(conn.servers, []);
    assert.equal(conn.tools.length, 0);
    assert.match(conn.errors[0]!, /^MCP server silent: did not answer initialize within 400 ms/);
    assert.match(conn.errors[0]!, /"startupTimeoutMs"/);
    // Its stderr says it received a well-formed initialize (else it would have exited 99).
    assert.match(conn.errors[0]!, /\| silent server: got initialize from hands, not answering/);
    assert.ok(waited >= 400 && waited < 3_000, `waited ${waited} ms`);
    // It ignores SIGTERM; it is gone all the same.
    const pid = Number(readFileSync(pidFile, "utf8"));
    await waitUntil(() => !alive(pid), 2_000);
  });

  test("an HTTP server that never answers initialize is reported after the bounded wait", async () => {
    const { createServer } = await import("node:http");
    const seen: string[] = [];
    const http = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        // What it got must be a JSON-RPC initialize request; anything else fails the test loudly.
        const msg = JSON.parse(body);
        if (msg.jsonrpc !== "2.0" || msg.method !== "initialize" || msg.id === undefined) {
          res.writeHead(400).end();
          throw new Error(`malformed request: ${body}`);
        }
        seen.push(msg.method);
        // ...and never answers.
      });
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const { port } = http.address() as import("node:net").AddressInfo;
    try {
      const started = Date.now();
      const conn = await connect({ web: { url: `http://127.0.0.1:${port}/mcp`, startupTimeoutMs: 300 } });
      assert.ok(Date.now() - started < 3_000);
      assert.deepEqual(seen, ["initialize"]);
      assert.deepEqual(conn.servers, []);
      assert.equal(
        conn.errors[0],
        'MCP server web: did not answer initialize within 300 ms (its "startupTimeoutMs" setting)',
      );
    } finally {
      http.closeAllConnections();
      http.close();
    }
  });

  test("a crashed server is reported and restarted; a call in flight gets a clear error", async () => {
    const log = join(tempDir(), "starts");
    const notices: string[] = [];
    const conn = await connect({ calc: unruly({ env: { MCP_UNRULY_LOG: log } }) }, notices);
    const pid = toolOf(conn, "mcp__calc__pid");
    const first = (await pid.execute({}, ctx)).output;
    const crashed = await toolOf(conn, "mcp__calc__crash").execute({ code: 3 }, ctx);
    assert.equal(crashed.isError, true);
    assert.match(crashed.output, /^ERROR: MCP server calc stopped while running crash: exited with code 3/);
    assert.match(crashed.output, /\| about to crash with code 3/);
    assert.match(crashed.output, /^[^\n]*code 3; it is being restarted, the call can be tried again\n/);
    assert.doesNotMatch(crashed.output, /Not connected/);
    // The next call waits for the restart and reaches a new process.
    const second = await pid.execute({}, ctx);
    assert.equal(second.isError, undefined, second.output);
    assert.notEqual(second.output, first);
    assert.ok(!alive(Number(first)));
    assert.equal(readFileSync(log, "utf8").trim().split("\n").length, 2);
    assert.match(
      notices[0]!,
      /^MCP server calc exited with code 3[\s\S]*restarting it in 20 ms \(restart 1 of 3\)/,
    );
    assert.match(notices[1]!, /MCP server calc is running again/);
  });

  test("restarts are bounded: a server that keeps crashing is given up on, and its tools say why", async () => {
    const notices: string[] = [];
    const dir = tempDir();
    const marker = join(dir, "crash-on-start");
    // The wrapper starts fine the first time, then crashes at every start.
    const wrapper = join(dir, "wrapper.mjs");
    const { writeFileSync, existsSync } = await import("node:fs");
    writeFileSync(
      wrapper,
      `import { existsSync, writeFileSync } from "node:fs";
if (existsSync(${JSON.stringify(marker)})) process.env.MCP_UNRULY_START = "crash";
else writeFileSync(${JSON.stringify(marker)}, "");
await import(${JSON.stringify(UNRULY)});
`,
    );
    const conn = await connect(
      { flaky: { command: process.execPath, args: [wrapper], maxRestarts: 2 } },
      notices,
    );
    assert.ok(existsSync(marker));
    const r = await toolOf(conn, "mcp__flaky__crash").execute({ code: 7 }, ctx);
    assert.match(r.output, /stopped while running crash: exited with code 7/);
    await waitUntil(() => notices.some((n) => /not restarted again/.test(n)));
    const after = await toolOf(conn, "mcp__flaky__echo").execute({ text: "hi" }, ctx);
    assert.equal(after.isError, true);
    assert.match(
      after.output,
      /^ERROR: MCP server flaky is not available: exited with code 1 before it was ready/,
    );
    assert.match(after.output, /\| Error: cannot open the database/);
    assert.deepEqual(
      notices.map(
        (n) => n.match(/restart \d of 2|running again|not restarted again \(2 restarts used\)/)?.[0],
      ),
      ["restart 1 of 2", "restart 2 of 2", "not restarted again (2 restarts used)"],
    );
  });

  test("a slow call times out per the server's timeoutMs; the server stays usable", async () => {
    const conn = await connect({ slow: unruly({ timeoutMs: 300 }) });
    const pidBefore = (await toolOf(conn, "mcp__slow__pid").execute({}, ctx)).output;
    const started = Date.now();
    const r = await toolOf(conn, "mcp__slow__sleep").execute({ ms: 10_000 }, ctx);
    assert.ok(Date.now() - started < 2_000);
    assert.equal(r.isError, true);
    assert.match(
      r.output,
      /^ERROR: sleep on MCP server slow did not finish within 300 ms \(its "timeoutMs" setting\)/,
    );
    assert.doesNotMatch(r.output, /stopped/);
    const echo = await toolOf(conn, "mcp__slow__echo").execute({ text: "still here" }, ctx);
    assert.equal(echo.output, "still here");
    assert.equal((await toolOf(conn, "mcp__slow__pid").execute({}, ctx)).output, pidBefore);
  });

  test("a wedged server (its event loop blocked) is stopped after a timeout and restarted", async () => {
    const notices: string[] = [];
    const conn = await connect({ busy: unruly({ timeoutMs: 300 }) }, notices);
    const pidBefore = Number((await toolOf(conn, "mcp__busy__pid").execute({}, ctx)).output);
    const r = await toolOf(conn, "mcp__busy__spin").execute({ ms: 60_000 }, ctx);
    assert.match(
      r.output,
      /did not finish within 300 ms[\s\S]*did not answer a ping afterwards either, so it was stopped/,
    );
    await waitUntil(() => !alive(pidBefore), 2_000);
    const pidAfter = Number((await toolOf(conn, "mcp__busy__pid").execute({}, ctx)).output);
    assert.ok(pidAfter > 0 && pidAfter !== pidBefore);
    assert.match(
      notices[0]!,
      /MCP server busy stopped answering \(no reply to a ping after spin timed out\)/,
    );
  });

  test("a server that spams stderr, notifications and stdout junk still answers; what is kept of it is capped", async () => {
    const conn = await connect({ loud: unruly({ timeoutMs: 20_000 }) });
    const r = await toolOf(conn, "mcp__loud__spam").execute(
      { stderrBytes: 8 * 1024 * 1024, notifications: 5_000, junkLines: 200 },
      ctx,
    );
    // 8 MB of stderr nobody drained would have blocked the server on a full pipe.
    assert.equal(r.output, "spammed 8388608 bytes, 5000 notifications, 200 junk lines");
    assert.equal((await toolOf(conn, "mcp__loud__echo").execute({ text: "ok" }, ctx)).output, "ok");
    // What is kept of its stderr is the capped tail, seen when it crashes.
    const crashed = await toolOf(conn, "mcp__loud__crash").execute({ code: 2 }, ctx);
    const stderrPart = crashed.output.split("lines on its stdout")[0]!;
    const kept = stderrPart.split("\n").filter((l) => l.startsWith("  | "));
    assert.ok(kept.length <= 20, `${kept.length} lines kept:\n${crashed.output}`);
    assert.ok(
      kept.every((l) => l.length <= 4 + 301),
      "each kept line is capped",
    );
    assert.ok(crashed.output.length < 8_000, `${crashed.output.length} characters`);
    assert.match(crashed.output, /\| about to crash with code 2/);
    assert.match(
      crashed.output,
      /200 lines on its stdout were not JSON-RPC; the last:\n {2}\| console.log noise 197\n[\s\S]*console.log noise 199$/,
    );
  });

  test("resource links and embedded resources keep their URIs; binary content is described", async () => {
    const conn = await connect({ res: unruly() });
    const r = await toolOf(conn, "mcp__res__resources").execute({}, ctx);
    assert.equal(
      r.output,
      [
        "two resources:",
        '[resource link "report.csv": file:///data/report.csv (text/csv, the monthly report)]',
        "[resource memo://notes/1 (text/plain)]",
        "first note",
        "[resource memo://blobs/2 (application/octet-stream): binary, 7 bytes]",
        "[image image/png, 9 bytes]",
      ].join("\n"),
    );
  });

  test("an aborted call ends at once and the server keeps working", async () => {
    const conn = await connect({ s: unruly() });
    const { ctx: own, abort } = makeTestContext({ workspace: tmpdir() });
    const pending = toolOf(conn, "mcp__s__sleep").execute({ ms: 10_000 }, own);
    setTimeout(abort, 100);
    const r = await pending;
    assert.equal(r.output, "ERROR: sleep was aborted");
    assert.equal((await toolOf(conn, "mcp__s__echo").execute({ text: "x" }, ctx)).output, "x");
  });

  test("close stops every server process", async () => {
    const conn = await connect({ a: unruly(), b: unruly() });
    const pids = await Promise.all(
      ["mcp__a__pid", "mcp__b__pid"].map(async (n) =>
        Number((await toolOf(conn, n).execute({}, ctx)).output),
      ),
    );
    await conn.close();
    open = [];
    assert.ok(pids.every((p) => !alive(p)));
  });

  test("config: misspelled keys and bad values are errors, timeouts are checked", () => {
    assert.throws(
      () => parseMcpServers({ x: { command: "x", timeoutMS: 5 } }),
      /mcpServers\.x: unknown key "timeoutMS"/,
    );
    assert.throws(
      () => parseMcpServers({ x: { command: "x", timeoutMs: -1 } }),
      /timeoutMs must be a whole number/,
    );
    assert.throws(
      () => parseMcpServers({ x: { command: "x", args: "a b" } }),
      /args must be an array of strings/,
    );
    assert.throws(
      () => parseMcpServers({ x: { command: "x", env: { A: 1 } } }),
      /env must be an object of strings/,
    );
    assert.throws(() => parseMcpServers({ x: { url: "not a url" } }), /url is not a URL/);
    assert.throws(
      () => parseMcpServers({ x: { url: "http://h/mcp", type: "stdio" } }),
      /type "stdio" does not fit/,
    );
    assert.deepEqual(
      parseMcpServers({ x: { command: "x", type: "stdio", timeoutMs: 5000, maxRestarts: 0 } }),
      {
        x: { command: "x", timeoutMs: 5000, maxRestarts: 0 },
      },
    );
  });
});
