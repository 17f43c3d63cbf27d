// No tool may block the agent on a path the workspace controls: FIFOs, sockets, devices (and
// symlinks to them) are refused with a clear error, also when a regular file is swapped for one
// between the check and the read (a renameat2(RENAME_EXCHANGE) flipper process), and a huge
// file costs a bounded read. The swap attacks run the tools in a child process, so that a
// tool that hangs (as on main, blocked in read(2) on a FIFO) fails the test instead of hanging it.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { codeOutlineTool } from "./code-outline.js";
import { editFileTool } from "./edit-file.js";
import { grepTool } from "./grep.js";
import { listDirTool } from "./list-dir.js";
import { startFlipper } from "./race-flipper.js";
import { readFileTool } from "./read-file.js";
import { makeTestContext, type TestContext } from "./test-context.js";
import { writeFileTool } from "./write-file.js";

const ATTEMPTS = 1000;
const isRoot = process.getuid?.() === 0;

/** A character device like /dev/zero (1:5) inside the workspace; only root can make one. */
function mknodZero(path: string): boolean {
  if (!isRoot) return false;
  try {
    execFileSync("mknod", [path, "c", "1", "5"]);
    return true;
  } catch {
    return false;
  }
}

function listen(path: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(path, () => resolve(server));
  });
}

/**
 * Runs the tools in a child process; what it reports, or "hung" when no call finished for
 * `stallMs` (a tool blocked in read(2) on a FIFO never finishes; a loaded machine is only slow:
 * a budget for the whole run failed at load 10+ with every call still finishing).
 */
function runChild(workspace: string, paths: string[], attempts: number, stallMs: number): Promise<string> {
  const here = new URL(".", import.meta.url).href;
  const script = `
    const [here, workspace, paths, attempts] = [process.argv[1], process.argv[2], JSON.parse(process.argv[3]), Number(process.argv[4])];
    const load = async (f, name) => (await import(here + f))[name];
    const tools = {
      read_file: await load("read-file.js", "readFileTool"),
      code_outline: await load("code-outline.js", "codeOutlineTool"),
      edit_file: await load("edit-file.js", "editFileTool"),
      grep: await load("grep.js", "grepTool"),
      list_dir: await load("list-dir.js", "listDirTool"),
      write_file: await load("write-file.js", "writeFileTool"), // last: it replaces what it finds
    };
    const ctx = { workspace, readRoots: [], signal: new AbortController().signal, sandbox: async () => { throw new Error("no sandbox"); } };
    const argsFor = (tool, path, i) => ({
      read_file: { path }, code_outline: { path }, list_dir: { path },
      edit_file: { path, old_string: "text", new_string: "text" + i },
      write_file: { path, content: "text = 1\\n" },
      grep: i % 2 ? { pattern: "text", path } : { pattern: "text" },
    })[tool];
    const errors = {};
    let served = 0;
    const ms = {};
    for (const [name, tool] of Object.entries(tools)) {
      const t0 = performance.now();
      for (let i = 0; i < attempts; i++) {
        const r = await tool.execute(argsFor(name, paths[i % paths.length], i), ctx);
        if (r.isError) errors[r.output.split("\\n")[0]] = 1; else served++;
        if (i % 50 === 49) process.stderr.write(".");
      }
      ms[name] = Math.round(performance.now() - t0);
    }
    process.stdout.write(JSON.stringify({ served, errors: Object.keys(errors), ms }));
  `;
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--input-type=module", "-e", script, here, workspace, JSON.stringify(paths), String(attempts)],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    // Every 50 calls the child writes a dot to stderr: the stall timer starts again.
    let timer = setTimeout(() => child.kill("SIGKILL"), stallMs);
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      err += d;
      clearTimeout(timer);
      timer = setTimeout(() => child.kill("SIGKILL"), stallMs);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(signal === "SIGKILL" ? "hung" : code === 0 ? out : `exit ${code}: ${err}`);
    });
  });
}

describe("special files in the workspace never block a tool", () => {
  let t: TestContext;
  const servers: Server[] = [];
  let hasDevice = false;

  before(async () => {
    t = makeTestContext();
    const ws = t.workspace;
    execFileSync("mkfifo", [join(ws, "pipe.txt")]);
    servers.push(await listen(join(ws, "sock.txt")));
    symlinkSync("/dev/zero", join(ws, "zero-link.txt"));
    hasDevice = mknodZero(join(ws, "zero.txt"));
    mkdirSync(join(ws, "swap"));
    for (const n of ["a", "b", "c", "d", "e"]) writeFileSync(join(ws, "swap", `${n}.py`), "text = 1\n");
    execFileSync("mkfifo", [join(ws, "swap", "pipe")]);
    servers.push(await listen(join(ws, "swap", "sock")));
    symlinkSync("/dev/zero", join(ws, "swap", "zero-link"));
    mknodZero(join(ws, "swap", "zero"));
  });
  after(async () => {
    for (const s of servers) s.close();
    await t.cleanup();
  });

  it("a FIFO, a socket, a device and a symlink to /dev/zero are refused at once with a clear error", async () => {
    const cases: [string, RegExp][] = [
      ["pipe.txt", /pipe\.txt is a named pipe \(FIFO\), not a regular file/],
      ["sock.txt", /sock\.txt is a socket, not a regular file/],
      ["zero-link.txt", /outside the workspace/],
    ];
    if (hasDevice) cases.push(["zero.txt", /zero\.txt is a device, not a regular file/]);
    for (const [path, want] of cases) {
      for (const r of [
        await readFileTool.execute({ path }, t),
        await codeOutlineTool.execute({ path }, t),
        await editFileTool.execute({ path, old_string: "a", new_string: "b" }, t),
        await grepTool.execute({ pattern: "x", path }, t),
      ]) {
        assert.equal(r.isError, true, `${path}: ${r.output}`);
        assert.match(r.output, want, path);
      }
    }
    const w = await writeFileTool.execute({ path: "pipe.txt", content: "x" }, t);
    assert.match(w.output, /^ERROR: pipe\.txt exists and is not a regular file/);
    const listed = await listDirTool.execute({}, t);
    assert.match(listed.output, /pipe\.txt \(special file\)/);
    const searched = await grepTool.execute({ pattern: "text" }, t);
    assert.match(searched.output, /swap\/a\.py:1:text = 1/, "grep walks past the special files");
  });

  it(`a regular file swapped for a FIFO, a socket or a device mid-call never hangs a tool (${ATTEMPTS} attempts per tool)`, async () => {
    const swap = join(t.workspace, "swap");
    const pairs: [string, string][] = [
      [join(swap, "a.py"), join(swap, "pipe")],
      [join(swap, "b.py"), join(swap, "zero-link")],
      [join(swap, "c.py"), join(swap, "sock")],
    ];
    if (hasDevice) pairs.push([join(swap, "e.py"), join(swap, "zero")]);
    const flipper = await startFlipper(pairs);
    let report: string;
    try {
      report = await runChild(
        t.workspace,
        ["swap/a.py", "swap/b.py", "swap/c.py", "swap/d.py", "swap/e.py"],
        ATTEMPTS,
        20_000,
      );
    } finally {
      await flipper.stop();
    }
    assert.notEqual(report, "hung", "a tool blocked on a swapped-in special file");
    assert.match(report, /^\{/, report);
    const { served, errors } = JSON.parse(report) as { served: number; errors: string[] };
    assert.ok(served > 0, "nothing was served at all");
    console.log(report);
    for (const e of errors)
      assert.match(
        e,
        /is a file, not a folder|named pipe|is a device|socket|changed while it was being opened|outside the workspace|not found|not a regular file|no changes|identical|not found in/,
        `unexpected error: ${e}`,
      );
  });

  it("a huge file is read only as far as needed: the lines asked for, then a bounded count", {
    timeout: 20_000,
  }, async () => {
    const path = join(t.workspace, "huge.log");
    const fd = openSync(path, "w");
    const line = `${"log line ".repeat(7)}\n`;
    writeSync(fd, line.repeat(10_000));
    ftruncateSync(fd, 64 * 1024 ** 3); // 64 GiB, sparse: reading it all would take minutes
    closeSync(fd);
    const started = performance.now();
    const r = await readFileTool.execute({ path: "huge.log", limit: 3 }, t);
    const ms = performance.now() - started;
    assert.equal(r.isError, undefined, r.output);
    assert.match(r.output, /^log line/);
    assert.match(
      r.output,
      /more lines follow \(the file is 64\.0 GB; lines were counted only up to line [\d,]+\); call read_file with offset=4/,
    );
    assert.equal(r.data?.["totalLines"], undefined);
    assert.equal(r.data?.["totalLinesAtLeast"], 10_000, "lines counted in the part that was read");
    assert.ok(ms < 10_000, `took ${ms} ms`);
  });
});
