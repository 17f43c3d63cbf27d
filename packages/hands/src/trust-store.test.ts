// The trust store: exact real paths, replaced folders, and stores the workspace (or another
// user) could have written, which are never read.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { readTrustStore, trustFolder, trustState, trustStorePath, untrustFolder } from "./trust-store.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-trust-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

let n = 0;
function setup() {
  const root = join(scratch, `t${n++}`);
  const ws = join(root, "ws");
  mkdirSync(join(ws, "sub"), { recursive: true });
  return { ws, env: { XDG_CONFIG_HOME: join(root, "config") } };
}

test("trust is kept 0600 in the user's config folder (0700), by real path, exactly", () => {
  const { ws, env } = setup();
  const link = join(ws, "..", "link");
  symlinkSync(ws, link);
  assert.equal(trustFolder(link, env), ws, "a symlink is trusted as the folder it points to");
  const path = trustStorePath(env);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(join(env.XDG_CONFIG_HOME, "hands")).mode & 0o777, 0o700);
  assert.deepEqual(
    readTrustStore(env).folders.map((f) => f.path),
    [ws],
  );
  assert.deepEqual(trustState(ws, env), { trusted: true });
  assert.equal(trustState(join(ws, "sub"), env).trusted, false, "a subfolder is not covered");
  assert.equal(trustState(join(ws, ".."), env).trusted, false, "nor a parent");
  // Trusting again keeps one entry.
  trustFolder(ws, env);
  assert.equal(readTrustStore(env).folders.length, 1);
  assert.equal(untrustFolder(link, env), ws);
  assert.equal(untrustFolder(ws, env), undefined);
  assert.equal(trustState(ws, env).trusted, false);
});

test("a moved folder is not trusted at its new path, and a folder put at a trusted path is not trusted", () => {
  const { ws, env } = setup();
  trustFolder(ws, env);
  const moved = `${ws}-moved`;
  renameSync(ws, moved);
  assert.deepEqual(trustState(moved, env), { trusted: false, why: "unknown" });
  // A different folder (say a fresh clone) at the trusted path.
  mkdirSync(ws);
  const state = trustState(ws, env);
  assert.equal(state.trusted, false);
  assert.equal(state.trusted === false && state.why, "replaced");
  // The original, moved back, is trusted again.
  rmSync(ws, { recursive: true });
  renameSync(moved, ws);
  assert.deepEqual(trustState(ws, env), { trusted: true });
});

test("a store inside the workspace, writable by others, or not a regular file is never read", () => {
  const { ws } = setup();
  // The user's config folder inside the workspace: a sandboxed command could write it.
  const inside = { XDG_CONFIG_HOME: join(ws, "config") };
  mkdirSync(join(ws, "config", "hands"), { recursive: true });
  const ino = statSync(ws).ino;
  writeFileSync(
    trustStorePath(inside),
    JSON.stringify({ folders: [{ path: ws, ino, trustedAt: new Date().toISOString() }] }),
    { mode: 0o600 },
  );
  const s1 = trustState(ws, inside);
  assert.equal(s1.trusted, false);
  assert.match(s1.trusted === false ? (s1.detail ?? "") : "", /inside the workspace/);
  assert.throws(() => trustFolder(ws, inside), /not changing the trusted folders: .*inside the workspace/);

  const { ws: ws2, env } = setup();
  trustFolder(ws2, env);
  chmodSync(trustStorePath(env), 0o666);
  const s2 = trustState(ws2, env);
  assert.equal(s2.trusted, false);
  assert.match(s2.trusted === false ? (s2.detail ?? "") : "", /writable by other users/);

  // A FIFO must not hang the start-up (a blocking open would wait for a writer forever).
  rmSync(trustStorePath(env));
  execFileSync("mkfifo", [trustStorePath(env)]);
  const s3 = trustState(ws2, env);
  assert.equal(s3.trusted, false);
  assert.match(s3.trusted === false ? (s3.detail ?? "") : "", /not a regular file/);

  // A symlink at the store's path is not followed.
  rmSync(trustStorePath(env));
  const elsewhere = join(ws2, "planted.json");
  const entry = { path: ws2, ino: statSync(ws2).ino, trustedAt: new Date().toISOString() };
  writeFileSync(elsewhere, JSON.stringify({ folders: [entry] }), { mode: 0o600 });
  symlinkSync(elsewhere, trustStorePath(env));
  const s4 = trustState(ws2, env);
  assert.equal(s4.trusted, false);
  assert.match(s4.trusted === false ? (s4.detail ?? "") : "", /cannot open .*ELOOP/);
  // The same content as a plain file is trusted: the refusal above was the symlink.
  rmSync(trustStorePath(env));
  writeFileSync(trustStorePath(env), readFileSync(elsewhere), { mode: 0o600 });
  assert.deepEqual(trustState(ws2, env), { trusted: true });
});

test("a malformed store is a clear error", () => {
  const { ws, env } = setup();
  mkdirSync(join(env.XDG_CONFIG_HOME, "hands"), { recursive: true });
  writeFileSync(trustStorePath(env), "{not json", { mode: 0o600 });
  assert.throws(() => trustState(ws, env), /cannot read .*trusted-folders\.json/);
  writeFileSync(trustStorePath(env), JSON.stringify({ folders: "x" }), { mode: 0o600 });
  assert.throws(() => trustState(ws, env), /expected \{"folders": \[\.\.\.\]\}/);
});
