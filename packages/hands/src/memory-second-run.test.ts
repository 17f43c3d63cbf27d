// A second task in a workspace starts from what the first taught it: the memory file exists,
// so memory is opened and read before the first request, and that request must carry the
// workspace's lessons. The scripted server checks it as the request arrives (a request without
// them is answered 400 and the run fails), and checks then that no SQLite extension has been
// loaded into the process: the recall's bit index comes from a column of the chunks table,
// not from sqlite-vec (whose loading cost 8–16 ms of the second run's start-up).
import assert from "node:assert/strict";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type RecordedHttpRequest, type ScriptedServer, startScriptedServer } from "@hands/llm";
import Database from "better-sqlite3";
import { openSession } from "./session.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-memory-second-run-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function runTask(server: ScriptedServer, workspace: string, dataDir: string, task: string) {
  const session = await openSession({
    workspace,
    flags: { baseUrl: server.url, model: "scripted-model", apiKey: "sk-test", sandbox: "local" },
    env: {},
    configFiles: false,
    approvalDefault: "auto",
    save: false,
    dataDir,
    tracePath: join(scratch, `trace-${Math.random().toString(36).slice(2)}.jsonl`),
    report: () => {},
  });
  try {
    return await session.run(task);
  } finally {
    await session.close();
  }
}

/** Shared objects mapped into this process whose name says sqlite-vec (vec0.so). */
const vecMapped = () =>
  readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .filter((l) => /sqlite-vec|vec0\./.test(l));

const sent = (req: RecordedHttpRequest) =>
  ((req.body as { messages?: { content?: unknown }[] }).messages ?? [])
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "")))
    .join("\n");

test("a second run's first request carries what the first taught the workspace, and no SQLite extension was loaded for it", async () => {
  const workspace = join(scratch, "ws");
  mkdirSync(workspace);
  writeFileSync(
    join(workspace, "package.json"),
    JSON.stringify({ name: "shop", scripts: { test: "node --test" } }),
  );
  writeFileSync(join(workspace, "package-lock.json"), "{}");
  writeFileSync(join(workspace, "tsconfig.json"), "{}");
  const dataDir = join(scratch, "data");

  const first = await startScriptedServer([{ content: "looked" }]);
  assert.equal((await runTask(first, workspace, dataDir, "look at the shop package")).status, "done");
  await first.close();

  const checked: string[] = [];
  let chats = 0;
  const second = await startScriptedServer((req) => {
    if (!req.path.endsWith("/chat/completions") || chats++ > 0) return { content: "done" };
    const text = sent(req);
    const missing = [
      "What earlier tasks in this workspace taught",
      "package shop",
      "test = node --test",
    ].filter((s) => !text.includes(s));
    if (missing.length)
      return { status: 400, errorMessage: `the first request lacks: ${missing.join("; ")}` };
    const mapped = vecMapped();
    if (mapped.length) return { status: 400, errorMessage: `sqlite-vec is loaded: ${mapped.join("; ")}` };
    checked.push(text);
    return { content: "done" };
  });
  const result = await runTask(second, workspace, dataDir, "run the shop tests");
  await second.close();
  assert.equal(result.status, "done", JSON.stringify(result));
  assert.equal(checked.length, 1, "the first request was checked and passed");
  assert.deepEqual(second.invalid, []);
});

/** The memory file's last event number, read by a connection of its own. */
function lastSeq(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT coalesce(max(seq), 0) AS seq FROM events").get() as { seq: number }).seq;
  } finally {
    db.close();
  }
}

test("a second run's first request leaves before memory writes anything of its step (the recall's marks, the system prompt and the task)", async () => {
  const workspace = join(scratch, "ws-order");
  mkdirSync(workspace);
  writeFileSync(
    join(workspace, "package.json"),
    JSON.stringify({ name: "till", scripts: { test: "vitest" } }),
  );
  const dataDir = join(scratch, "data-order");
  const first = await startScriptedServer([{ content: "looked" }]);
  assert.equal((await runTask(first, workspace, dataDir, "look at the till package")).status, "done");
  await first.close();
  const file = join(dataDir, "memory.db");
  const before = lastSeq(file);

  // Subscribed before the session's own listener: this 'finish' listener runs first, at the
  // moment node:http has handed the request's body to the socket.
  let atLeave: number | undefined;
  const onStart = (message: unknown) => {
    const req = (message as { request: { path: string; once(e: string, f: () => void): void } }).request;
    if (atLeave !== undefined || !req.path.endsWith("/chat/completions")) return;
    atLeave = -1;
    req.once("finish", () => {
      atLeave = lastSeq(file);
    });
  };
  subscribe("http.client.request.start", onStart);
  let carried = false;
  const second = await startScriptedServer((req) => {
    carried ||= sent(req).includes("package till");
    return { content: "done" };
  });
  try {
    assert.equal((await runTask(second, workspace, dataDir, "run the till tests")).status, "done");
  } finally {
    unsubscribe("http.client.request.start", onStart);
    await second.close();
  }
  assert.ok(carried, "the first request carried the workspace's lessons");
  assert.equal(atLeave, before, "no memory event was written before the first request left");
  const db = new Database(file, { readonly: true });
  try {
    const later = db.prepare("SELECT kind FROM events WHERE seq > ? ORDER BY seq").all(before) as {
      kind: string;
    }[];
    const kinds = later.map((e) => e.kind);
    assert.ok(kinds.includes("accessed"), `the recalled lessons were marked afterwards: ${kinds.join(",")}`);
    assert.ok(kinds.includes("created"), `the step's messages were stored afterwards: ${kinds.join(",")}`);
  } finally {
    db.close();
  }
});
