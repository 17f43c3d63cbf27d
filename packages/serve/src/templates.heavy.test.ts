// E2B's Template API on `hands serve`, building for real (gVisor containers on Docker): the
// official SDK's Template builder and Template.build with its build logs, then Sandbox.create(alias);
// a failing step as the SDK's BuildError; an apt package from Debian's mirror. (Heavy: a build
// takes 5-60 s. The API's refusals, quotas, tokens and the CLI are in templates.test.ts.)
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BuildError, Sandbox, Template } from "e2b";
import { dockerSkip, startTestServe, type TestServe } from "./test-support.js";

describe("E2B's Template API on hands serve: builds (official SDK)", {
  skip: await dockerSkip("runsc"),
  timeout: 600_000,
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
    // The templates' images go with them (DELETE removes the image).
    for (const name of ["my-tpl", "cowsay"])
      await fetch(`${s.apiUrl}/templates/${name}`, {
        method: "DELETE",
        headers: { "x-api-key": s.key },
      }).catch(() => {});
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

  it("a template with an extra apt package (from Debian's mirror, through the build's allow-list proxy) runs its program", async () => {
    const t0 = Date.now();
    await Template.build(
      Template().fromBaseImage().aptInstall(["cowsay"], { noInstallRecommends: true }),
      "cowsay",
      {
        ...s.opts(),
        cpuCount: 1,
        memoryMB: 1024,
      },
    );
    console.error(`# apt template build: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const sb = await Sandbox.create("cowsay", s.opts());
    try {
      const r = await sb.commands.run("/usr/games/cowsay moo");
      assert.match(r.stdout, /< moo >/);
    } finally {
      await sb.kill();
    }
  });
});
