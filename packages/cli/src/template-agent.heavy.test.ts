// The agent in a local template (heavy: a cold template build exports the 1.5 GB image): `hands
// sandbox template build` with an apt package, a file, a workdir and a start command; `hands
// sandbox exec --template` starts in the workdir with the start command running; `hands
// --template` gives the agent's commands the template's program (a scripted model reads them).
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type RecordedHttpRequest, startScriptedServer } from "@hands/llm";
import { checkBwrap, checkDocker, imageExists, imageTag } from "@hands/sandbox";
import { cleanEnv, runHands, scriptedRunArgs } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-template-agent-")));
// bwrap sandboxes of a root user run as an unprivileged host user: the templates must be readable.
const templates = realpathSync(mkdtempSync(join(tmpdir(), "hands-template-agent-tpl-")));
chmodSync(templates, 0o755);
after(async () => {
  // The template's docker image goes with it (rm), then its root filesystem's folder.
  await runHands(
    ["sandbox", "template", "rm", "agent-tpl"],
    cleanEnv(scratch, { HANDS_TEMPLATES_DIR: templates }),
  );
  rmSync(scratch, { recursive: true, force: true });
  rmSync(templates, { recursive: true, force: true });
});
const ready = checkBwrap().ok && (await checkDocker()).ok && (await imageExists(imageTag()));

function lastToolResult(req: RecordedHttpRequest): string {
  const tools = (req.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool");
  const last = tools[tools.length - 1];
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
}

test("hands --template runs the agent's commands in a built template (bwrap)", {
  skip: !ready && "no bwrap, Docker or base image",
  timeout: 900_000,
}, async () => {
  const env = cleanEnv(scratch, { HANDS_TEMPLATES_DIR: templates });
  const note = join(scratch, "note.txt");
  writeFileSync(note, "from the recipe\n");
  const built = await runHands(
    [
      "sandbox",
      "template",
      "build",
      "agent-tpl",
      "--apt",
      "cowsay",
      "--file",
      `${note}:/opt/t/note.txt`,
    ].concat(["--workdir", "/opt/t", "--start", "echo up > /tmp/up; sleep 300"]),
    env,
    scratch,
  );
  assert.equal(built.code, 0, built.stderr.slice(-2000));
  assert.match(built.stdout, /^agent-tpl hands-template:[0-9a-f]{16} built in/);

  const ws = realpathSync(mkdtempSync(join(scratch, "ws-")));
  chmodSync(ws, 0o777);
  const ex = await runHands(
    [
      "sandbox",
      "exec",
      "--sandbox",
      "bwrap",
      "--template",
      "agent-tpl",
      "--",
      "sh",
      "-c",
      "sleep 0.5; pwd; cat note.txt /tmp/up",
    ],
    env,
    ws,
  );
  assert.equal(ex.code, 0, ex.stderr);
  assert.equal(ex.stdout, "/opt/t\nfrom the recipe\nup\n");

  const seen: string[] = [];
  const model = await startScriptedServer({
    // A command first; the answer once its result came back (read here).
    script: (req) => {
      if ((req.body?.messages ?? []).some((m: { role: string }) => m.role === "tool")) {
        seen.push(lastToolResult(req));
        return { content: "done" };
      }
      return {
        content: "",
        toolCalls: [{ name: "run_command", arguments: { command: "/usr/games/cowsay moo" } }],
      };
    },
  });
  try {
    const r = await runHands(
      [...scriptedRunArgs(model.url, ws), "--sandbox", "bwrap", "--template", "agent-tpl", "go"],
      env,
      ws,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(seen[0] ?? "", /< moo >/);
    // Without the template the same command has no program.
    const plain = await runHands([...scriptedRunArgs(model.url, ws), "--sandbox", "bwrap", "go"], env, ws);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(seen[1] ?? "", /exit code: 127/);
  } finally {
    await model.close();
  }
});
