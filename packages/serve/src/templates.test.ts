// E2B's Template API on `hands serve` without building (fast): the official SDK's refusals (a
// registry image, a bad name, a service template's name), another tenant's templates, build
// quotas, access tokens, signed upload links, and E2B's own CLI (@e2b/cli: `e2b template list`,
// `e2b sandbox logs`). Real builds: templates.heavy.test.ts.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BuildError, Sandbox, Template } from "e2b";
import { startTestServe, type TestServe } from "./test-support.js";

const cliBin = join(
  createRequire(import.meta.url).resolve("@e2b/cli/package.json"),
  "..",
  "dist",
  "index.js",
);

function e2b(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const home = mkdtempSync(join(tmpdir(), "e2b-cli-home-"));
    const child = spawn(process.execPath, [cliBin, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: home, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      resolve({ code: code ?? -1, out });
    });
  });
}

describe("E2B's Template API on hands serve (official SDK and CLI)", {
  timeout: 300_000,
}, () => {
  let s: TestServe;
  before(async () => {
    s = await startTestServe();
  });
  after(async () => {
    await s?.stop();
  });

  it("refuses what it cannot do: a registry image, a bad name, another tenant's template", async () => {
    await assert.rejects(
      Template.build(Template().fromImage("python:3.12"), "py", s.opts()),
      (e: Error) => e instanceof BuildError && /not available on this service/.test(e.message),
    );
    await assert.rejects(
      Template.build(Template().fromBaseImage(), "Bad Name!", s.opts()),
      /invalid template name/,
    );
    const { key: other } = await s.keys.create("tenant-b");
    await fetch(`${s.apiUrl}/v3/templates`, {
      method: "POST",
      headers: { "x-api-key": s.key, "content-type": "application/json" },
      body: JSON.stringify({ name: "only-a" }),
    });
    assert.equal(await Template.exists("only-a", s.opts()), true);
    assert.equal(await Template.exists("only-a", s.opts(other)), false);
    const listB = await fetch(`${s.apiUrl}/templates`, { headers: { "x-api-key": other } });
    assert.deepEqual(await listB.json(), []);
    await assert.rejects(Sandbox.create("only-a", s.opts()), /not found/);
    await assert.rejects(
      Template.build(Template().fromBaseImage(), "base", s.opts()),
      /template of the service/,
    );
  });

  it("quotas: one build at a time per tenant (429), templates per tenant", async () => {
    const { key } = await s.keys.create("tenant-c");
    const res = await fetch(`${s.apiUrl}/v3/templates`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ name: "pending-a" }),
    });
    assert.equal(res.status, 202);
    const again = await fetch(`${s.apiUrl}/v3/templates`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ name: "pending-b" }),
    });
    assert.equal(again.status, 429);
    assert.match(((await again.json()) as { message: string }).message, /at most 1 template build/);
  });

  it("E2B's CLI lists the tenant's templates and shows a sandbox's logs; an access token maps to the key's tenant", async () => {
    const env = { E2B_API_KEY: s.key, E2B_API_URL: s.apiUrl, E2B_SANDBOX_URL: s.sandboxUrl };
    const list = await e2b(["template", "list", "--format", "json"], env);
    assert.equal(list.code, 0, list.out);
    const names = (JSON.parse(list.out) as Array<{ aliases: string[] }>).flatMap((t) => t.aliases);
    assert.ok(names.includes("only-a"), list.out);
    const sb = await Sandbox.create("base", s.opts());
    try {
      const logsOut = await e2b(["sandbox", "logs", sb.sandboxId], env);
      assert.equal(logsOut.code, 0, logsOut.out);
      assert.match(logsOut.out, /create/);
    } finally {
      await sb.kill();
    }
    // Access tokens: issued for an API key, they act for its tenant (and only with a valid mac).
    const issued = await fetch(`${s.apiUrl}/hands/v1/access-tokens`, {
      method: "POST",
      headers: { "x-api-key": s.key },
    });
    const { accessToken } = (await issued.json()) as { accessToken: string };
    assert.match(accessToken, /^sk_e2b_[0-9a-f]{40}$/);
    const teams = await fetch(`${s.apiUrl}/teams`, { headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(teams.status, 200);
    assert.equal(((await teams.json()) as Array<{ name: string }>)[0]?.name, "tenant-a");
    const byToken = await fetch(`${s.apiUrl}/templates`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    assert.ok(
      ((await byToken.json()) as Array<{ aliases: string[] }>).some((t) => t.aliases.includes("only-a")),
    );
    const forged = `${accessToken.slice(0, -1)}${accessToken.endsWith("0") ? "1" : "0"}`;
    const refused = await fetch(`${s.apiUrl}/templates`, { headers: { authorization: `Bearer ${forged}` } });
    assert.equal(refused.status, 401);
  });

  it("upload links are signed: a forged or changed link is refused, and so is an oversized body", async () => {
    const hash = "a".repeat(64);
    const res = await fetch(
      `${s.apiUrl}/hands/v1/template-files/${"0".repeat(36)}/${hash}?until=${Date.now() + 60_000}&sig=${"b".repeat(64)}`,
      {
        method: "PUT",
        body: "x",
      },
    );
    assert.equal(res.status, 403);
  });
});
