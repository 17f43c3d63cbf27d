// Local templates on the real Docker, bubblewrap and gVisor: a template with an extra apt
// package (cowsay, not in the base image) builds from the host's apt, and a sandbox of it runs
// the program; a second build of the same recipe is a cache hit. Skipped without Docker or the
// base image. The first build on a machine takes a minute or two (bench/template-build.mjs times it).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createSandbox } from "./create.js";
import { checkDocker } from "./docker.js";
import { imageExists, imageTag } from "./image.js";
import { buildTemplate, parseRecipe, recipeScript, removeTemplate, templateHash } from "./template.js";

const dir = process.env["HANDS_TEMPLATES_DIR"] ?? "/var/lib/hands/templates";
const ready = (await checkDocker()).ok && (await imageExists(imageTag()));

test("recipes from config are checked: no shell syntax in package names, no unknown fields", () => {
  assert.throws(() => parseRecipe({ apt: ["cowsay; rm -rf /"] }), /package names/);
  assert.throws(() => parseRecipe({ apt: ["$(id)"] }), /package names/);
  assert.throws(() => parseRecipe({ apt: "cowsay" }), /package names/);
  assert.throws(() => parseRecipe({ dockerfile: "RUN x" }), /unknown template field/);
  assert.throws(() => parseRecipe({ env: { "A B": "x" } }), /bad variable/);
  assert.throws(() => parseRecipe([]), /object/);
  const r = parseRecipe({ apt: ["cowsay"], pip: ["requests==2.31.0"] });
  assert.match(recipeScript(r), /apt-get install .*'cowsay'/);
  assert.notEqual(templateHash(r, "base:1"), templateHash({ apt: ["cowsay", "jq"] }, "base:1"));
  assert.notEqual(templateHash(r, "base:1"), templateHash(r, "base:2"));
});

test("a template with an extra apt package runs its program on docker, gVisor and bwrap", {
  skip: !ready && "no Docker or base image",
  timeout: 600_000,
}, async () => {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const recipe = parseRecipe({ apt: ["cowsay"], env: { HANDS_TEMPLATE_TEST: "yes" } });
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
        const r = await sb.exec("/usr/games/cowsay moo");
        assert.equal(r.exitCode, 0, `${kind} ${JSON.stringify(extra)}: ${r.stderr}`);
        assert.match(r.stdout, /< moo >/);
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
