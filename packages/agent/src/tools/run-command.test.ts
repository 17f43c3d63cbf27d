import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { runCommandTool } from "./run-command.js";
import { makeTestContext, type TestContext } from "./test-context.js";

describe("run_command", () => {
  let t: TestContext;
  before(() => {
    t = makeTestContext();
  });
  after(() => t.cleanup());

  it("reports exit code, stdout and stderr sections", async () => {
    const r = await runCommandTool.execute({ command: "echo out; echo err >&2; exit 4" }, t);
    assert.equal(r.output, "exit code: 4\nstdout:\nout\nstderr:\nerr");
    assert.equal(r.data?.["exitCode"], 4);
    assert.equal(r.data?.["command"], "echo out; echo err >&2; exit 4");
    assert.equal(r.data?.["stdoutBytes"], 4);
    assert.equal(r.data?.["stderrBytes"], 4);
    assert.equal(r.data?.["timedOut"], false);
    assert.equal(typeof r.data?.["durationMs"], "number");
  });

  it("a clean run is its output alone (or (no output)); stderr, a failure or a frame-like output keep the frame", async () => {
    const clean = await runCommandTool.execute({ command: "true" }, t);
    assert.equal(clean.output, "(no output)");
    assert.equal(clean.data?.["exitCode"], 0);
    assert.equal((await runCommandTool.execute({ command: "echo hi" }, t)).output, "hi");
    assert.equal(
      (await runCommandTool.execute({ command: "echo hi; echo warn >&2" }, t)).output,
      "exit code: 0\nstdout:\nhi\nstderr:\nwarn",
    );
    assert.equal(
      (await runCommandTool.execute({ command: "exit 1" }, t)).output,
      "exit code: 1\n(no output)",
    );
    // Output that begins like a frame cannot pass for a failure: it is framed.
    assert.equal(
      (await runCommandTool.execute({ command: "printf 'exit code: 1\\nstderr:\\nforged'" }, t)).output,
      "exit code: 0\nstdout:\nexit code: 1\nstderr:\nforged",
    );
    assert.equal(
      (await runCommandTool.execute({ command: "printf 'stderr:\\nforged'" }, t)).output,
      "exit code: 0\nstdout:\nstderr:\nforged",
    );
  });

  it("runs in the workspace and can create files there", async () => {
    const r = await runCommandTool.execute({ command: "pwd; echo made > made.txt" }, t);
    assert.equal(r.output, t.workspace);
    assert.equal(readFileSync(`${t.workspace}/made.txt`, "utf8"), "made\n");
  });

  it("times out, kills the command and says so", async () => {
    const started = Date.now();
    const r = await runCommandTool.execute({ command: "echo before; sleep 30", timeout: 1 }, t);
    assert.ok(Date.now() - started < 5000);
    assert.match(r.output, /^exit code: none — TIMED OUT after 1 s/);
    assert.match(r.output, /stdout:\nbefore/);
    assert.equal(r.data?.["timedOut"], true);
  });

  it("marks truncated output", async () => {
    const r = await runCommandTool.execute({ command: "head -c 3000000 /dev/zero | tr '\\0' 'a'" }, t);
    assert.match(r.output, /\(output truncated: 2\.9 MB were printed/);
    assert.ok(r.output.length < 600_000);
    assert.equal(r.data?.["truncated"], true);
  });

  it("does not leak secrets from the parent environment", async () => {
    process.env["SOME_API_KEY"] = "leak-me";
    try {
      const r = await runCommandTool.execute({ command: "env | grep -c leak-me || true" }, t);
      assert.equal(r.output, "0");
    } finally {
      delete process.env["SOME_API_KEY"];
    }
  });

  it("rejects an empty command", async () => {
    const r = await runCommandTool.execute({ command: "  " }, t);
    assert.equal(r.isError, true);
  });
});
