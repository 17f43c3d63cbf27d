// Local templates on the real Docker, bubblewrap and gVisor (heavy: a cold build exports the
// 1.5 GB base image, a minute or two — bench/template-build.mjs times it): a template with an
// extra apt package (cowsay, not in the base image), a file, a workdir and a start command builds
// from the host's apt, and a sandbox of it runs the program; a second build of the same recipe
// is a cache hit; a recipe whose command fails reports its error. Fast checks: template.test.ts.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createSandbox } from "./create.js";
import { checkDocker } from "./docker.js";
import { imageExists, imageTag } from "./image.js";
import { buildTemplate, parseRecipe, removeTemplate, startTemplateCommand } from "./template.js";

const dir = process.env["HANDS_TEMPLATES_DIR"] ?? "/var/lib/hands/templates";
const ready = (await checkDocker()).ok && (await imageExists(imageTag()));

test("a template with an extra apt package runs its program on docker, gVisor and bwrap", {
  skip: !ready && "no Docker or base image",
  timeout: 600_000,
}, async () => {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const ctx = mkdtempSync(join(tmpdir(), "hands-template-files-"));
  writeFileSync(join(ctx, "note.txt"), "a file of the recipe\n");
  const recipe = parseRecipe({
    apt: ["cowsay"],
    env: { HANDS_TEMPLATE_TEST: "yes" },
    files: [{ from: join(ctx, "note.txt"), to: "/opt/recipe/note.txt", mode: "0644" }],
    workdir: "/opt/recipe",
    start: "echo started > /tmp/started-by-template; sleep 300",
  });
  const first = await buildTemplate(dir, "test-cowsay", recipe);
  const again = await buildTemplate(dir, "test-cowsay", recipe);
  assert.equal(again.cached, true);
  assert.equal(again.image, first.image);
  const ws = mkdtempSync(join(tmpdir(), "hands-template-test-"));
  try {
    for (const [kind, extra] of [
      ["docker", { image: first.image }],
      ["docker", { image: first.image, runtime: "runsc" }],
      ["bwrap", { rootfs: first.rootfs }],
    ] as const) {
      const sb = await createSandbox({ kind, workspace: ws, network: "none", ...extra });
      try {
        await startTemplateCommand(sb, recipe.start as string);
        const r = await sb.exec("cd /opt/recipe && /usr/games/cowsay moo; cat note.txt");
        assert.equal(r.exitCode, 0, `${kind} ${JSON.stringify(extra)}: ${r.stderr}`);
        assert.match(r.stdout, /< moo >[\s\S]*a file of the recipe\n$/);
        // The start command runs on in the background, across commands.
        const started = await sb.exec(
          "sleep 0.5; cat /tmp/started-by-template; pgrep -f 'sleep 300' >/dev/null && echo alive",
        );
        assert.equal(started.stdout, "started\nalive\n", started.stderr);
      } finally {
        await sb.destroy();
      }
    }
    // The base image itself does not have it: the program came from the template.
    const base = await createSandbox({ kind: "docker", workspace: ws, network: "none" });
    try {
      assert.notEqual((await base.exec("test -e /usr/games/cowsay")).exitCode, 0);
    } finally {
      await base.destroy();
    }
  } finally {
    rmSync(ws, { recursive: true, force: true });
    rmSync(ctx, { recursive: true, force: true });
  }
});

test("a recipe that fails reports apt's error and leaves no half-built template", {
  skip: !ready && "no Docker or base image",
  timeout: 600_000,
}, async () => {
  const d = mkdtempSync(join(tmpdir(), "hands-template-bad-"));
  try {
    await assert.rejects(
      buildTemplate(d, "bad", parseRecipe({ commands: ["echo broken-recipe >&2; exit 3"] })),
      /exit 3[\s\S]*broken-recipe/,
    );
    await assert.rejects(removeTemplate(d, "bad"), /no template bad/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
