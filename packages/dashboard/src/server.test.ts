// The dashboard's server against a hostile data folder and hostile requests: ids that climb out
// of the traces folder, a trace whose full-output path points elsewhere, a FIFO and a symlink
// among the traces, a memory file that is not one; and the command line's own checks.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { RunSummary } from "./api-types.js";
import { cookieName } from "./auth.js";
import { type RunningDashboard, startDashboard } from "./server.js";
import { HANDS_BIN, handsEnv } from "./testing/hands-cli.js";

const scratch = mkdtempSync(join(tmpdir(), "hands-dash-server-"));
const data = join(scratch, "data");
let dash: RunningDashboard;

const get = (path: string) =>
  fetch(`${dash.url}${path.replace(/^\//, "")}`, {
    headers: { cookie: `${cookieName(dash.port)}=${dash.session}` },
    signal: AbortSignal.timeout(5000),
  });

const event = (e: Record<string, unknown>) => JSON.stringify({ time: Date.now(), ...e });

describe("the dashboard's server", () => {
  before(async () => {
    mkdirSync(join(data, "traces"), { recursive: true });
    mkdirSync(join(data, "outputs"), { recursive: true });
    writeFileSync(join(scratch, "secret.txt"), "not for the dashboard\n");
    // A trace whose tool_end claims a full output outside the data folder's outputs.
    writeFileSync(
      join(data, "traces", "escape.jsonl"),
      [
        event({
          type: "run_start",
          runId: "escape",
          task: "t",
          provider: "p",
          model: "m",
          workspace: "/w",
          maxSteps: 5,
        }),
        event({ type: "tool_start", step: 1, callId: "c1", name: "read_file", args: {} }),
        event({
          type: "tool_end",
          step: 1,
          callId: "c1",
          name: "read_file",
          isError: false,
          output: "…",
          resultChars: 9,
          truncated: true,
          fullOutputPath: join(scratch, "secret.txt"),
          durationMs: 1,
        }),
      ].join("\n"),
    );
    execFileSync("mkfifo", [join(data, "traces", "fifo.jsonl")]);
    symlinkSync(join(scratch, "secret.txt"), join(data, "traces", "link.jsonl"));
    writeFileSync(join(data, "traces", "garbage.jsonl"), "\u0000\u0001 not a trace at all");
    dash = await startDashboard({ dataDir: data });
  });
  after(async () => {
    await dash.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("a FIFO, a symlink and garbage among the traces are listed as unreadable, without hanging the list", async () => {
    const r = await get("/api/runs");
    assert.equal(r.status, 200);
    const runs = (await r.json()) as RunSummary[];
    const by = new Map(runs.map((x) => [x.id, x]));
    assert.equal(by.get("fifo")?.status, "unreadable");
    assert.match(by.get("fifo")?.error ?? "", /not a regular file/);
    assert.equal(by.get("link")?.status, "unreadable");
    assert.equal(by.get("garbage")?.status, "unreadable");
    // No result and no live mark (trace-live.ts) beside it: nobody is writing it.
    assert.equal(by.get("escape")?.status, "unfinished");
  });

  test("ids that climb out of the traces folder are refused", async () => {
    for (const id of ["..%2F..%2Fsecret", "..", "%2Fetc%2Fpasswd", ".hidden"]) {
      const r = await get(`/api/runs/${id}`);
      assert.ok(r.status === 400 || r.status === 404, `${id}: ${r.status}`);
      assert.doesNotMatch(await r.text(), /not for the dashboard/);
    }
    assert.equal((await get("/api/runs/link")).status, 422);
    assert.equal((await get("/api/runs/fifo")).status, 422);
  });

  test("a request's messages: bad id lists are 400, unknown ids are reported missing, unreadable traces 422", async () => {
    for (const ids of ["", "abc", "1-", "0-3", "5-2", "1,,2", "1-99999999", "1-20000,20002-40000"]) {
      const r = await get(`/api/runs/escape/messages?ids=${encodeURIComponent(ids)}`);
      assert.equal(r.status, 400, ids.slice(0, 20));
    }
    const r = await get("/api/runs/escape/messages?ids=1-3");
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { messages: [], missing: [1, 2, 3] });
    assert.equal((await get("/api/runs/escape/message?id=1")).status, 404);
    assert.equal((await get("/api/runs/escape/message?id=x")).status, 400);
    assert.equal((await get("/api/runs/fifo/messages?ids=1")).status, 422);
    assert.equal((await get("/api/runs/link/message?id=1")).status, 422);
    assert.equal((await get("/api/runs/nope/messages?ids=1")).status, 404);
  });

  test("a full-output path outside the data folder's outputs is refused", async () => {
    const r = await get("/api/runs/escape/output?call=c1");
    assert.equal(r.status, 403);
    assert.doesNotMatch(await r.text(), /not for the dashboard/);
  });

  test("a memory file that is not SQLite is an error saying so; bad parameters are 400", async () => {
    writeFileSync(join(data, "memory.db"), "garbage ".repeat(1000));
    const r = await get("/api/memory/map");
    assert.equal(r.status, 503);
    assert.match(((await r.json()) as { error: string }).error, /memory\.db/);
    assert.equal((await get("/api/memory/cell?layer=attic")).status, 400);
    assert.equal((await get("/api/memory/map?buckets=-3")).status, 400);
  });

  test("the static files stay inside the built front end", async () => {
    const r = await get("/assets/..%2F..%2F..%2Fpackage.json");
    assert.equal(r.status, 404);
    const page = await get("/");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'self'/);
  });
});

describe("hands dashboard (command line)", () => {
  test("prints the URL and the file with the one-time link, refuses without it, stops cleanly on SIGTERM; bad flags exit 2", async () => {
    const child = spawn(process.execPath, [HANDS_BIN, "dashboard", "--no-open"], {
      env: handsEnv(scratch),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    const exited = new Promise((r) => child.once("exit", r));
    for (let i = 0; i < 200 && !/Open it with: /.test(out); i++) await new Promise((r) => setTimeout(r, 25));
    const printed = /Dashboard: (http:\/\/127\.0\.0\.1:\d+\/)\nOpen it with: (file:\/\/\S+)/.exec(out);
    assert.ok(printed, out);
    const link = /url=(http:[^"]+)"/.exec(readFileSync(fileURLToPath(printed[2]!), "utf8"));
    assert.ok(link, "the file holds the link");
    const token = new URL(link[1]!).searchParams.get("token");
    assert.ok(token && !out.includes(token), "the token is not printed");
    assert.equal((await fetch(`${printed[1]}api/runs`)).status, 401);
    const r = await fetch(link[1]!.replaceAll("&#38;", "&"), { redirect: "manual" });
    assert.equal(r.status, 200);
    assert.match(r.headers.get("set-cookie") ?? "", /^hands_dashboard_\d+=/);
    child.kill("SIGTERM");
    assert.equal(await exited, 0);

    const bad = spawn(process.execPath, [HANDS_BIN, "dashboard", "--port", "99999"], {
      env: handsEnv(scratch),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    bad.stderr.on("data", (d) => {
      err += d;
    });
    assert.equal(await new Promise((r) => bad.once("exit", r)), 2);
    assert.match(err, /--port must be a whole number from 1 to 65535/);
  });
});
