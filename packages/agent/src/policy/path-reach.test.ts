import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { expandBraces, normalizeAny, reachOf } from "./path-reach.js";
import { sedScript } from "./programs.js";
import { UNKNOWN } from "./shell-parse.js";

const at = (cwd: string) => ({ cwd, workspaces: ["/workspace", "/home/me/proj"] });

describe("where a path reaches", () => {
  test("braces expand like bash's, sequences too, and stop at a limit", () => {
    assert.deepEqual(expandBraces("/{*,}"), ["/*", "/"]);
    assert.deepEqual(expandBraces("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
    assert.deepEqual(expandBraces("x{1..3}"), ["x1", "x2", "x3"]);
    assert.deepEqual(expandBraces("{a}"), ["{a}"], "one item is no list");
    assert.equal(expandBraces("{a,b}".repeat(30), 64).length, 64);
  });

  test("normalizing keeps climbs out of a relative start and maps other homes to ~", () => {
    assert.equal(normalizeAny("a/../../b"), "../b");
    assert.equal(normalizeAny("~root/x"), "~/x");
    assert.equal(normalizeAny("~/.."), "/");
    assert.equal(normalizeAny("/tmp/../etc/"), "/etc");
  });

  test("globs are judged by the folder they sweep", () => {
    for (const p of ["/?*", "/[a-z]*", "/*/", "~/.*", "/usr/*", "/home/*", "/@(etc|usr)", "/tmp/../*"])
      assert.equal(reachOf(p, at(".")), "sweeping", p);
    assert.equal(reachOf("/usr/lib/x/*", at(".")), "outside");
    assert.equal(reachOf("build/*", at(".")), "inside");
    assert.equal(reachOf("/tmp/*", at(".")), "temp");
    assert.equal(reachOf("*", at("/")), "sweeping", "cd / then *");
    assert.equal(reachOf("*", at("~")), "sweeping");
    assert.equal(reachOf("../*", at(".")), "outside");
  });

  test("the workspace by any of its paths; settings and hooks inside it; devices; run-time parts", () => {
    assert.equal(reachOf("/workspace/dist", at(".")), "inside");
    assert.equal(reachOf("/home/me/proj/dist", at(".")), "inside");
    assert.equal(reachOf("/workspace_evil/x", at(".")), "outside", "a prefix is not the folder");
    assert.equal(reachOf("/home/me", at(".")), "outside");
    assert.equal(reachOf(".hands/policy.json", at(".")), "settings");
    assert.equal(reachOf("../.git/hooks/pre-commit", at("src")), "settings");
    assert.equal(reachOf(".git/objects/x", at(".")), "inside");
    assert.equal(reachOf("/dev/null", at(".")), "sink");
    assert.equal(reachOf("/dev/sda", at(".")), "device");
    assert.equal(reachOf(`${UNKNOWN}/x`, at(".")), "unknown");
    assert.equal(reachOf("build", at(UNKNOWN)), "unknown", "relative to a folder only run time knows");
    assert.equal(reachOf("~-/x", at(".")), "unknown");
  });
});

describe("sed scripts", () => {
  const read = (script: string) => {
    const k = { effects: [], runs: [], opaque: [], risky: [], known: true } as Parameters<
      typeof sedScript
    >[1];
    sedScript(script, k);
    return k;
  };
  test("e runs its command; a bare e and s///e cannot be read; w and s///w write", () => {
    assert.deepEqual(
      read("1e id").runs.map((r) => ("code" in r ? r.code : "")),
      ["id"],
    );
    assert.equal(read("$e").opaque.length, 1);
    assert.equal(read("s/x/y/e").opaque.length, 1);
    assert.deepEqual(
      read("/x/w out.txt").effects.map((e) => e.path),
      ["out.txt"],
    );
    assert.deepEqual(
      read("s|a|b|gw /etc/x").effects.map((e) => e.path),
      ["/etc/x"],
    );
  });
  test("the plain commands do nothing of the sort, whatever their delimiters hold", () => {
    for (const s of [
      "1,5p",
      "/^export/p",
      "s/e/w/g",
      "s|/e|/w|",
      "y/abc/xyz/",
      "10q",
      "/start/,/end/d",
      "a\\ text e w",
    ]) {
      const k = read(s);
      assert.deepEqual([k.runs.length, k.effects.length, k.opaque.length], [0, 0, 0], s);
    }
  });
});
