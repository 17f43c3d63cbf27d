// A failed command's diagnosis as the model receives it: the real bin, a bwrap sandbox with the
// network off, the package index built by `hands sandbox package-index`, and a scripted model
// server that reads each tool result it is sent.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type RecordedHttpRequest, type ServerTurn, startScriptedServer } from "@hands/llm";
import { checkBwrap } from "@hands/sandbox";
import { cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-diag-e2e-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

function lastToolResult(req: RecordedHttpRequest): string {
  const tools = (req.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool");
  const last = tools[tools.length - 1];
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
}

const run = (command: string): ServerTurn => ({
  content: "",
  toolCalls: [{ name: "run_command", arguments: { command } }],
});

test("the model is told which package a missing program is in, and that the network is off", {
  skip: !checkBwrap().ok && "bubblewrap cannot run here",
  timeout: 180_000,
}, async () => {
  const env = cleanEnv(scratch);
  const built = await runHands(["sandbox", "package-index"], env, scratch);
  assert.equal(built.code, 0, built.stderr);
  assert.match(built.stdout, /package-index\/packages-[a-z]+-[a-z0-9]+\.tsv\n$/);

  const ws = realpathSync(mkdtempSync(join(scratch, "ws-")));
  const seen: string[] = [];
  const model = await startScriptedServer({
    script: (req, i) => {
      if (i > 0) seen.push(lastToolResult(req));
      if (i === 0) return run("sl -e");
      if (i === 1) return run("curl -sS --max-time 5 https://example.com/");
      if (i === 2) return run("false");
      return { content: "done" };
    },
  });
  const r = await runHands(
    [
      "--json",
      "--quiet",
      "--base-url",
      model.url,
      "--api-key",
      "k",
      "--model",
      "m",
      "--no-memory",
      "--sandbox",
      "bwrap",
      "--cwd",
      ws,
      "try",
    ],
    env,
    ws,
  );
  await model.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(seen.length, 3, JSON.stringify(seen));
  assert.match(seen[0] ?? "", /exit code: 127/);
  assert.match(
    seen[0] ?? "",
    /\ndiagnosis: `sl` is not installed in this sandbox; Debian package sl provides sl — not installed in this sandbox \(add it to the image or a template: apt-get install sl\)\.$/,
  );
  assert.match(
    seen[1] ?? "",
    /\ndiagnosis: the network is off in this sandbox .*--allow-domain example\.com/,
  );
  // An ordinary failure is only its exit code.
  assert.doesNotMatch(seen[2] ?? "", /diagnosis/);
  assert.match(seen[2] ?? "", /^exit code: 1/);
  // The same facts reach the event stream (and so the trace).
  const ends = r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "tool_end");
  const causes = ends.map((e) => e.data?.diagnosis?.cause ?? e.result?.data?.diagnosis?.cause ?? null);
  assert.deepEqual(causes, ["command-not-found", "network-off", null], JSON.stringify(ends[0]));
});
