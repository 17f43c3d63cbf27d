// Local templates, the fast part (no build: CI's fresh machine has no cached template and the
// default suite must not export the 1.5 GB image): recipes from config are checked field by
// field, and a recipe that cannot work fails before the export — an apt package the host's apt
// lists do not know, commands that do not parse, a missing file. Builds: template.heavy.test.ts.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { buildTemplate, parseRecipe, recipeScript, templateHash } from "./template.js";

test("recipes from config are checked: no shell syntax in package names, no unknown fields", () => {
  assert.throws(() => parseRecipe({ apt: ["cowsay; rm -rf /"] }), /package names/);
  assert.throws(() => parseRecipe({ apt: ["$(id)"] }), /package names/);
  assert.throws(() => parseRecipe({ apt: "cowsay" }), /package names/);
  assert.throws(() => parseRecipe({ dockerfile: "RUN x" }), /unknown template field/);
  assert.throws(() => parseRecipe({ env: { "A B": "x" } }), /bad variable/);
  assert.throws(() => parseRecipe([]), /object/);
  assert.throws(() => parseRecipe({ files: [{ from: "a", to: "relative" }] }), /absolute path/);
  assert.throws(() => parseRecipe({ files: [{ from: "a", to: "/x/../etc" }] }), /no '\.\.'/);
  assert.throws(() => parseRecipe({ files: [{ from: "a", to: "/x", mode: "rwx" }] }), /bad mode/);
  assert.throws(() => parseRecipe({ workdir: "relative" }), /absolute path/);
  assert.throws(() => parseRecipe({ start: "a\nb" }), /one shell line/);
  const full = parseRecipe({
    files: [{ from: "/etc/hostname", to: "/opt/h" }],
    workdir: "/opt",
    start: "sleep 9",
  });
  assert.match(recipeScript(full), /cp -a \/tmp\/hands-files\/0 '\/opt\/h'/);
  assert.match(recipeScript(full), /mkdir -p '\/opt'/);
  const r = parseRecipe({ apt: ["cowsay"], pip: ["requests==2.31.0"] });
  assert.match(recipeScript(r), /apt-get install .*'cowsay'/);
  assert.notEqual(templateHash(r, "base:1"), templateHash({ apt: ["cowsay", "jq"] }, "base:1"));
  assert.notEqual(templateHash(r, "base:1"), templateHash(r, "base:2"));
});

const hasAptLists =
  existsSync("/usr/bin/apt-cache") &&
  existsSync("/var/lib/apt/lists") &&
  readdirSync("/var/lib/apt/lists").some((f) => f.includes("_Packages"));

test("a recipe that cannot work fails in a second, before the export: unknown apt package, bad shell, missing file", {
  skip: !hasAptLists && "no apt lists on this host",
}, async () => {
  const d = mkdtempSync(join(tmpdir(), "hands-template-bad-"));
  try {
    const t0 = Date.now();
    await assert.rejects(
      buildTemplate(d, "bad", parseRecipe({ apt: ["cowsay", "hands-no-such-package-xyz"] })),
      /apt has no package hands-no-such-package-xyz/,
    );
    await assert.rejects(
      buildTemplate(d, "bad", parseRecipe({ commands: ["if then fi ("] })),
      /do not parse/,
    );
    await assert.rejects(
      buildTemplate(d, "bad", parseRecipe({ files: [{ from: join(d, "absent"), to: "/opt/x" }] })),
      /does not exist/,
    );
    assert.ok(Date.now() - t0 < 15_000, `${Date.now() - t0} ms`);
    // Nothing was left behind.
    assert.deepEqual(readdirSync(d), []);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
