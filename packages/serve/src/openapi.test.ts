// The management API and its contract (openapi.yml) agree: every documented operation is routed
// (none answers "no such endpoint"), documented security is enforced, and what is not in the
// contract is not served.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { raw, startTestServe, type TestServe } from "./test-support.js";

/** (method, path, public) of each operation, read from the file's regular two-level layout. */
function operations(): Array<{ method: string; path: string; open: boolean }> {
  const text = readFileSync(fileURLToPath(new URL("../openapi.yml", import.meta.url)), "utf8");
  const paths = text.slice(text.indexOf("\npaths:\n"), text.indexOf("\ncomponents:\n")).split("\n");
  const ops: Array<{ method: string; path: string; open: boolean }> = [];
  let path = "";
  for (const line of paths) {
    const p = /^ {2}(\/\S*):$/.exec(line);
    if (p) path = p[1] as string;
    const m = /^ {4}(get|post|delete|put):$/.exec(line);
    if (m) ops.push({ method: (m[1] as string).toUpperCase(), path, open: false });
    if (/^ {6}security: \[\]$/.test(line) && ops.length)
      (ops[ops.length - 1] as { open: boolean }).open = true;
  }
  return ops;
}

describe("management API vs openapi.yml", () => {
  let s: TestServe;
  before(async () => {
    s = await startTestServe();
  });
  after(async () => {
    await s?.stop();
  });

  it("routes every documented operation and enforces its security", async () => {
    const ops = operations();
    assert.ok(ops.length >= 14, `found ${ops.length} operations`);
    for (const op of ops) {
      const url = `${s.apiUrl}${op.path
        .replace("{sandboxID}", "nosuchsandbox000000")
        .replace("{templateID}", "nosuchtemplate")
        .replace("{buildID}", "nosuchbuild")
        .replace("{alias}", "nosuch")
        .replace("{hash}", "0".repeat(64))}`;
      const body = op.method === "POST" ? JSON.stringify({ timeout: 10, templateID: "nope" }) : undefined;
      const anon = await raw(url, { method: op.method, ...(body ? { body } : {}) });
      if (op.open) assert.equal(anon.status, 200, `${op.method} ${op.path} is public`);
      else assert.equal(anon.status, 401, `${op.method} ${op.path} needs a key`);
      const r = await raw(url, {
        method: op.method,
        headers: { "x-api-key": s.key, "content-type": "application/json" },
        ...(body ? { body } : {}),
      });
      assert.ok(![405, 501].includes(r.status), `${op.method} ${op.path}: ${r.status}`);
      assert.ok(!r.text.includes("no such endpoint"), `${op.method} ${op.path} is routed: ${r.text}`);
    }
  });

  it("does not serve what the contract does not name", async () => {
    for (const [method, path] of [
      ["GET", "/v3/templates"],
      ["POST", "/sandboxes/nosuchsandbox000000/checkpoint"],
      ["GET", "/v3/sandboxes"],
    ] as const) {
      const r = await raw(`${s.apiUrl}${path}`, { method, headers: { "x-api-key": s.key } });
      assert.equal(r.status, 404);
      assert.match(r.text, /no such endpoint/);
    }
  });
});
