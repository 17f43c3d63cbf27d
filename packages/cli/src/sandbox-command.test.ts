// `hands sandbox …` and the sandbox flags, through the real bin: a real bubblewrap sandbox.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
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
  const r = hands([
    "sandbox",
    "exec",
    "--sandbox",
    "bwrap",
    "--",
    "sh",
    "-c",
    "cat in.txt; id -u; pwd; exit 3",
  ]);
  assert.equal(r.status, 3, r.stderr);
  assert.equal(r.stdout, "from the workspace\n1000\n/workspace\n");
});

test("sandbox exec with the local backend warns that it does not isolate", () => {
  const r = hands(["sandbox", "exec", "--sandbox", "local", "--", "echo", "hi"]);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, "hi\n");
  assert.match(r.stderr, /does not isolate/);
});

/** The arguments exec passes on, as its program receives them (each NUL-terminated). */
const TRICKY = [
  "two words",
  "",
  "it's",
  '"double"',
  "a\nb\n",
  "$HOME",
  "$(echo pwned)",
  "`echo pwned`",
  "back\\slash\\n",
  "*",
  "-n",
  "a;b|c&d",
  "tab\there",
];

for (const kind of ["local", "bwrap"]) {
  test(`sandbox exec (${kind}) passes the command's argv through exactly`, () => {
    const two = hands(["sandbox", "exec", "--sandbox", kind, "--", "sh", "-c", "echo one; echo two"]);
    assert.equal(two.status, 0, two.stderr);
    assert.equal(two.stdout, "one\ntwo\n");
    const p = hands(["sandbox", "exec", "--sandbox", kind, "--", "printf", "a\\nb\\n"]);
    assert.equal(p.stdout, "a\nb\n");
    const r = hands(["sandbox", "exec", "--sandbox", kind, "--", "printf", "%s\\0", ...TRICKY]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.split("\0").slice(0, -1), TRICKY);
    // A program name with a space is that name, not a shell line.
    const one = hands(["sandbox", "exec", "--sandbox", kind, "--", "echo one; echo two"]);
    assert.equal(one.status, 127);
    assert.equal(one.stdout, "");
  });
}

test("sandbox exec --session (docker) passes the command's argv through exactly", async (t) => {
  const { checkDocker, createSandbox } = await import("@hands/sandbox/backends");
  const up = await checkDocker();
  if (!up.ok) return t.skip(`no Docker Engine: ${up.reason}`);
  const sb = await createSandbox({ kind: "docker", workspace: dir, network: "none" });
  try {
    // Started by its first command; from then on `hands sandbox ls` lists it by its id.
    assert.equal((await sb.exec("true")).exitCode, 0);
    const run = (args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [BIN, "sandbox", "exec", "--session", sb.id, "--", ...args],
          { cwd: dir },
          (err, stdout, stderr) =>
            resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const two = await run(["sh", "-c", "echo one; echo two"]);
    assert.equal(two.status, 0, two.stderr);
    assert.equal(two.stdout, "one\ntwo\n");
    const r = await run(["printf", "%s\\0", ...TRICKY]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.split("\0").slice(0, -1), TRICKY);
  } finally {
    await sb.destroy();
  }
});

test("sandbox exec without a command, and prune with a bad --max-age, are usage errors", () => {
  const none = hands(["sandbox", "exec", "--sandbox", "local", "--"]);
  assert.equal(none.status, 2);
  assert.match(none.stderr, /give a command after --/);
  for (const bad of ["abc", "0", "-5", "10x", "", "1e3", "NaN"]) {
    const r = hands(["sandbox", "prune", `--max-age=${bad}`]);
    assert.equal(r.status, 2, `--max-age ${bad}: ${r.stderr}`);
    assert.match(r.stderr, /--max-age must be a positive duration.*got "/);
    assert.equal(r.stdout, "", "nothing was pruned");
  }
  const ok = hands(["sandbox", "prune", "--max-age", "2h"]);
  assert.equal(ok.status, 0, ok.stderr);
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
