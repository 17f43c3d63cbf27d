// web_fetch and query_database in a real session, driven by the scripted model server over
// HTTP: offered only when they can reach something, approved like a command, databases only
// from trusted settings. --allow-domain needs an isolating sandbox (the local one cannot filter
// its commands' network), hence bubblewrap where web_fetch is on.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ApprovalPrompt } from "@hands/agent";
import { type ScriptedServer, type ServerTurn, startScriptedServer } from "@hands/llm";
import Database from "better-sqlite3";
import { createSession, type SessionOptions } from "./index.js";
import { trustFolder } from "./trust-store.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-reach-")));
const servers: ScriptedServer[] = [];
let site: Server;
let port = 0;

before(async () => {
  site = createServer((req, res) => {
    if (req.url === "/page")
      return void res
        .writeHead(200, { "content-type": "text/html" })
        .end(
          `<html><head><title>Notes</title></head><body><main><h1>Release notes</h1>${"<p>Version 2 adds web_fetch to the agent, with every hop checked.</p>".repeat(5)}</main></body></html>`,
        );
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
  port = (site.address() as AddressInfo).port;
});
after(async () => {
  for (const s of servers) await s.close();
  site.closeAllConnections();
  site.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Case {
  tools: string[];
  /** What the model was told of each tool call, in order. */
  results: string[];
  asked: ApprovalPrompt[];
  workspace: string;
}

/** One request of a real session with `script`; `setup` prepares the workspace and the config folder. */
async function run(
  extra: Partial<SessionOptions>,
  script: ServerTurn[],
  setup?: (workspace: string, env: NodeJS.ProcessEnv) => void,
  answer?: (p: ApprovalPrompt) => boolean,
): Promise<Case> {
  const server = await startScriptedServer(script);
  servers.push(server);
  const home = mkdtempSync(join(scratch, "case-"));
  const workspace = join(home, "ws");
  mkdirSync(workspace);
  const env = { XDG_CONFIG_HOME: join(home, "config"), HANDS_DATA_DIR: join(home, "data") };
  setup?.(workspace, env);
  const asked: ApprovalPrompt[] = [];
  const session = await createSession({
    workspace,
    baseURL: server.url,
    apiKey: "sk-test",
    model: "scripted-model",
    dataDir: join(home, "data"),
    env,
    sandbox: "local",
    memory: false,
    ...(answer
      ? {
          approve: (p: ApprovalPrompt) => {
            asked.push(p);
            return answer(p);
          },
        }
      : {}),
    ...extra,
  });
  try {
    await session.run("go");
  } finally {
    await session.close();
  }
  const chat = server.requests.filter((r) => r.path.endsWith("/chat/completions"));
  const last = chat.at(-1)!.body.messages as { role: string; content: string }[];
  return {
    tools: (chat[0]!.body.tools as { function: { name: string } }[]).map((t) => t.function.name),
    results: last.filter((m) => m.role === "tool").map((m) => m.content),
    asked,
    workspace,
  };
}

const call = (name: string, args: Record<string, unknown>): ServerTurn[] => [
  { toolCalls: [{ name, arguments: args }] },
  { content: "done" },
];

test("without --allow-domain or a database neither tool is sent, and a call is told why", async () => {
  const r = await run({}, call("web_fetch", { url: `http://127.0.0.1:${port}/page` }));
  assert.ok(!r.tools.includes("web_fetch") && !r.tools.includes("query_database"), r.tools.join(", "));
  assert.match(r.results[0]!, /web_fetch is not available in this session: no domain is allowed/);
});

test("web_fetch with an allowed domain: asked like a command in ask mode, the page comes back as markdown", async () => {
  const r = await run(
    { allowDomains: [`127.0.0.1:${port}`], approval: "ask", sandbox: "bwrap" },
    call("web_fetch", { url: `http://127.0.0.1:${port}/page` }),
    undefined,
    () => true,
  );
  assert.ok(r.tools.includes("web_fetch"));
  assert.equal(r.asked.length, 1);
  assert.equal(r.asked[0]!.name, "web_fetch");
  assert.match(r.results[0]!, /^GET http:\/\/127\.0\.0\.1:\d+\/page\nHTTP 200 OK/);
  assert.match(r.results[0]!, /# Release notes/);
  const no = await run(
    { allowDomains: [`127.0.0.1:${port}`], approval: "ask", sandbox: "bwrap" },
    call("web_fetch", { url: `http://127.0.0.1:${port}/page` }),
    undefined,
    () => false,
  );
  assert.match(no.results[0]!, /^DENIED: web_fetch was not run; .*the user said no/);
  // An allowed domain does not open loopback by another spelling.
  const other = await run(
    { allowDomains: [`127.0.0.1:${port}`], sandbox: "bwrap" },
    call("web_fetch", { url: `http://localhost:${port}/page` }),
  );
  assert.match(other.results[0]!, /^ERROR: refused: localhost is not on the allow-list/);
});

test("an SQLite file in the workspace makes query_database available; the model reads a capped table", async () => {
  const r = await run(
    {},
    call("query_database", { database: "shop.db", sql: "SELECT * FROM t ORDER BY a" }),
    (ws) => {
      const db = new Database(join(ws, "shop.db"));
      db.exec("CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two')");
      db.close();
    },
  );
  assert.ok(r.tools.includes("query_database"));
  assert.ok(!r.tools.includes("write_database"), "no database allows writes");
  assert.match(r.results[0]!, /\| a \| b \|\n\| --- \| --- \|\n\| 1 \| one \|\n\| 2 \| two \|\n\(2 rows;/);
});

test("databases come from trusted settings only: an untrusted project's are ignored, the user's apply", async () => {
  const plant = (ws: string, env: NodeJS.ProcessEnv, where: "project" | "user") => {
    const db = new Database(join(ws, "data.sqlite"));
    db.exec("CREATE TABLE k (v TEXT); INSERT INTO k VALUES ('kept')");
    db.close();
    // Not named like an SQLite file: only the settings can make it reachable.
    writeFileSync(join(ws, "plain"), "");
    const config = JSON.stringify({ databases: { main: { path: "data.sqlite" } } });
    if (where === "project") {
      mkdirSync(join(ws, ".hands"));
      writeFileSync(join(ws, ".hands", "config.json"), config);
    } else {
      mkdirSync(join(env.XDG_CONFIG_HOME as string, "hands"), { recursive: true });
      writeFileSync(join(env.XDG_CONFIG_HOME as string, "hands", "config.json"), config);
    }
  };
  const script = call("query_database", { database: "main", sql: "SELECT v FROM k" });
  const untrusted = await run({ configFiles: true }, script, (ws, env) => plant(ws, env, "project"));
  // The workspace's own SQLite file is still queryable by path, but "main" is not a database.
  assert.match(untrusted.results[0]!, /^ERROR: no such file: main$/);
  const user = await run({ configFiles: true }, script, (ws, env) => plant(ws, env, "user"));
  assert.match(user.results[0]!, /^main: SQLite data\.sqlite, read-only\n\| v \|\n\| --- \|\n\| kept \|/);
  const trusted = await run({ configFiles: true }, script, (ws, env) => {
    plant(ws, env, "project");
    trustFolder(ws, env);
  });
  assert.match(trusted.results[0]!, /\| kept \|/);
});

test("write_database: offered for a database that allows writes, asked of a person even in auto mode", async () => {
  const setup = (ws: string) => {
    const db = new Database(join(ws, "w.db"));
    db.exec("CREATE TABLE log (m TEXT)");
    db.close();
  };
  const databases = { w: { path: "w.db", writes: true } };
  const script = call("write_database", { database: "w", sql: "INSERT INTO log VALUES ('x')" });
  const nobody = await run({ databases, approval: "auto" }, script, setup);
  assert.ok(nobody.tools.includes("write_database"));
  assert.match(nobody.results[0]!, /^DENIED: write_database was not run; .*needs a person's approval/);
  const yes = await run({ databases, approval: "auto" }, script, setup, () => true);
  assert.equal(yes.asked.length, 1);
  assert.match(yes.results[0]!, /OK: 1 row\(s\) changed/);
  const rows = new Database(join(yes.workspace, "w.db"), { readonly: true })
    .prepare("SELECT m FROM log")
    .all();
  assert.deepEqual(rows, [{ m: "x" }]);
});
