// `hands sandbox …` and the sandbox flags, through the real bin: a real bubblewrap sandbox.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseCliArgs } from "./args.js";

const BIN = fileURLToPath(new URL("../bin/hands.js", import.meta.url));
const dir = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-sbx-")));
after(() => rmSync(dir, { recursive: true, force: true }));

function hands(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: "utf8", timeout: 60_000 });
}

test("sandbox exec runs a one-shot command in a bwrap sandbox of the current folder", () => {
  writeFileSync(join(dir, "in.txt"), "from the workspace\n");
  const r = hands(["sandbox", "exec", "--sandbox", "bwrap", "--", "cat in.txt; id -u; pwd; exit 3"]);
  assert.equal(r.status, 3, r.stderr);
  assert.equal(r.stdout, "from the workspace\n1000\n/workspace\n");
});

test("sandbox exec with the local backend warns that it does not isolate", () => {
  const r = hands(["sandbox", "exec", "--sandbox", "local", "--", "echo hi"]);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, "hi\n");
  assert.match(r.stderr, /does not isolate/);
});

test("sandbox ls, prune and unknown commands", () => {
  const ls = hands(["sandbox", "ls"]);
  assert.equal(ls.status, 0, ls.stderr);
  assert.match(ls.stdout, /SESSION|no sandbox sessions/);
  const prune = hands(["sandbox", "prune"]);
  assert.equal(prune.status, 0, prune.stderr);
  assert.match(prune.stdout, /removed \d+ containers, \d+ cgroups, \d+ temp folders/);
  const bad = hands(["sandbox", "bogus"]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown command "bogus"/);
  const rm = hands(["sandbox", "rm", "no-such-session"]);
  assert.equal(rm.status, 1);
  assert.match(rm.stderr, /no session no-such-session/);
});

test("--network and --allow-domain parse into settings", () => {
  const a = parseCliArgs(["--sandbox", "docker", "--network", "host", "task"]);
  assert.equal(a.sandbox, "docker");
  assert.equal(a.network, "host");
  const b = parseCliArgs([
    "--allow-domain",
    "pypi.org,files.pythonhosted.org",
    "--allow-domain",
    "github.com",
    "t",
  ]);
  assert.deepEqual(b.allowDomain, ["pypi.org", "files.pythonhosted.org", "github.com"]);
});
