// E2B's Template API on `hands serve`, driven by the official SDK (`Template().…`, Template.build
// with its build logs, Template.exists, Sandbox.create(alias)) and E2B's own CLI (@e2b/cli:
// `e2b template list`, `e2b sandbox logs`) on real Docker with gVisor. Builds here need no
// network (ENV, RUN, COPY, start command); the apt case is templates.heavy.test.ts.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BuildError, Sandbox, Template } from "e2b";
import { dockerSkip, startTestServe, type TestServe } from "./test-support.js";

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
  skip: await dockerSkip("runsc"),
  timeout: 300_000,
}, () => {
  let s: TestServe;
  let ctx: string;
  const logs: string[] = [];
  before(async () => {
    s = await startTestServe();
    ctx = mkdtempSync(join(tmpdir(), "e2b-template-ctx-"));
    writeFileSync(join(ctx, "hello.txt"), "hello from the context\n");
  });
  after(async () => {
    await s?.stop();
    rmSync(ctx, { recursive: true, force: true });
  });

  it("builds a template with the SDK (logs streamed) and a sandbox from it has what the steps made", async () => {
    const template = Template({ fileContextPath: ctx })
      .fromBaseImage()
      .setEnvs({ FROM_TEMPLATE: "yes" })
      .copy("hello.txt", "/opt/app/")
      .runCmd("echo built-by-run > /opt/marker && echo step-output-line")
      .setStartCmd("echo started > /tmp/started; sleep infinity", "test -f /tmp/started");
    const info = await Template.build(template, "my-tpl", {
      ...s.opts(),
      cpuCount: 1,
      memoryMB: 512,
      onBuildLogs: (l) => {
        logs.push(l.message);
        if (process.env.SHOW_LOGS) console.error(l.message);
      },
    });
    assert.equal(info.name, "my-tpl");
    assert.ok(
      logs.some((l) => l.includes("step-output-line")),
      logs.join("\n"),
    );
    assert.equal(await Template.exists("my-tpl", s.opts()), true);
    assert.equal(await Template.exists("no-such-tpl", s.opts()), false);
    const sb = await Sandbox.create("my-tpl", s.opts());
    try {
      const r = await sb.commands.run("cat /opt/marker /opt/app/hello.txt /tmp/started; echo $FROM_TEMPLATE");
      assert.equal(r.stdout, "built-by-run\nhello from the context\nstarted\nyes\n");
    } finally {
      await sb.kill();
    }
  });

  it("a failing step is the SDK's BuildError, naming the step's message; the name stays unusable", async () => {
    const bad = Template().fromBaseImage().runCmd("echo broken-recipe >&2; exit 3");
    const seen: string[] = [];
    await assert.rejects(
      Template.build(bad, "bad-tpl", { ...s.opts(), onBuildLogs: (l) => seen.push(l.message) }),
      (e: Error) => e instanceof BuildError && /step 1 \(RUN\) failed with exit code 3/.test(e.message),
    );
    assert.ok(
      seen.some((l) => l.includes("broken-recipe")),
      seen.join("\n"),
    );
    await assert.rejects(Sandbox.create("bad-tpl", s.opts()), /not found/);
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
    assert.equal(await Template.exists("my-tpl", s.opts(other)), false);
    await assert.rejects(Sandbox.create("my-tpl", s.opts(other)), /not found/);
    await assert.rejects(
      Template.build(Template().fromBaseImage(), "base", s.opts()),
      /template of the service/,
    );
  });

  it("quotas: one build at a time per tenant (429), templates per tenant", async () => {
    const res = await fetch(`${s.apiUrl}/v3/templates`, {
      method: "POST",
      headers: { "x-api-key": s.key, "content-type": "application/json" },
      body: JSON.stringify({ name: "pending-a" }),
    });
    assert.equal(res.status, 202);
    const again = await fetch(`${s.apiUrl}/v3/templates`, {
      method: "POST",
      headers: { "x-api-key": s.key, "content-type": "application/json" },
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
    assert.ok(names.includes("my-tpl"), list.out);
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
      ((await byToken.json()) as Array<{ aliases: string[] }>).some((t) => t.aliases.includes("my-tpl")),
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
