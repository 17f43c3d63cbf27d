import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { prepareSandbox } from "./sandbox-setup.js";

// A language server's sandbox is made in the background after a read; a session that ends
// meanwhile left it alive and the CLI never exited (bench/request-size.mjs hung on every run).
async function closeWhileMaking(wait: () => Promise<unknown>) {
  const root = mkdtempSync(join(tmpdir(), "sandbox-setup-"));
  try {
    const env = { ...process.env, HANDS_DATA_DIR: join(root, "data") };
    const box = await prepareSandbox({ kind: "local", workspace: root, env }, () => {});
    const making = box.create();
    await wait();
    await box.close();
    const made = await making.then(
      (s) => s.id,
      (e: Error) => e.message,
    );
    const auditFile = join(root, "data", "sandbox-audit.jsonl");
    const audit = existsSync(auditFile)
      ? readFileSync(auditFile, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l))
          .map((e) => [e.event, e.session])
      : [];
    await assert.rejects(box.create(), /the session has ended/);
    return { made, audit };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test("a sandbox asked for just before the session closes is not made", async () => {
  const { made, audit } = await closeWhileMaking(async () => {});
  assert.equal(made, "the session has ended");
  assert.deepEqual(audit, []);
});

test("a sandbox being made when the session closes is destroyed once made", async () => {
  await import("@hands/sandbox/backends");
  const { made, audit } = await closeWhileMaking(() => new Promise((r) => setTimeout(r, 1)));
  assert.match(made, /^local-/);
  assert.deepEqual(audit, [
    ["create", made],
    ["destroy", made],
  ]);
});
