// `hands sandbox image --list`: the image's runtimes as a real sandbox of it reports them,
// checked against the same programs asked directly (docker run of the image; the host for bwrap).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { checkDocker, imageTag } from "@hands/sandbox/backends";
import { BIN } from "./testing/cli-process.js";

interface Listing {
  backend: string;
  image: string;
  runtimes: { name: string; kind: string; version?: string }[];
}

function list(kind: string): Listing {
  const r = spawnSync(process.execPath, [BIN, "sandbox", "image", "--list", "--json", "--sandbox", kind], {
    encoding: "utf8",
    timeout: 120_000,
    cwd,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Listing;
}

// Every run in a folder of its own: `sandbox exec` makes a sandbox of its working folder (as
// root, an ACL for the sandbox's user on it), which must never be this checkout.
const cwd = mkdtempSync(join(tmpdir(), "hands-image-test-"));
after(() => rmSync(cwd, { recursive: true, force: true }));

const version = (l: Listing, name: string) => l.runtimes.find((r) => r.name === name)?.version;

test("docker: the image's own python3, git and bash versions, as docker run of the image gives them", {
  skip: !(await checkDocker()).ok && "no Docker Engine here",
}, () => {
  const l = list("docker");
  assert.equal(l.image, imageTag());
  const direct = (cmd: string) =>
    spawnSync("docker", ["run", "--rm", "--network", "none", l.image, "sh", "-c", `${cmd} | head -n1`], {
      encoding: "utf8",
    }).stdout.trim();
  assert.equal(version(l, "python3"), direct("python3 --version"));
  assert.equal(version(l, "git"), direct("git --version"));
  assert.match(version(l, "bash") ?? "", /^GNU bash, version \d/);
  for (const k of ["language", "tool", "python-library"])
    assert.ok(
      l.runtimes.some((r) => r.kind === k),
      k,
    );
  const absent = l.runtimes.filter((r) => !r.version).map((r) => r.name);
  for (const name of absent)
    assert.notEqual(
      spawnSync("docker", ["run", "--rm", l.image, "sh", "-c", `command -v ${name}`]).status,
      0,
      `${name} is there after all`,
    );
});

test("bwrap: the host's /usr as a sandboxed command finds it", {
  skip: !checkBwrap().ok && "bubblewrap cannot run here",
}, () => {
  const l = list("bwrap");
  const inSandbox = (...argv: string[]) =>
    spawnSync(process.execPath, [BIN, "sandbox", "exec", "--sandbox", "bwrap", "--", ...argv], {
      encoding: "utf8",
      cwd,
    }).stdout.trim();
  assert.equal(version(l, "python3"), inSandbox("python3", "--version"));
  assert.equal(version(l, "node"), inSandbox("node", "--version"));
  assert.match(version(l, "node") ?? "", /^v\d+\./);
});

test("without --list it says what to give; another backend is a usage error", () => {
  const r = spawnSync(process.execPath, [BIN, "sandbox", "image"], { encoding: "utf8", cwd });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /give --list/);
  const bad = spawnSync(process.execPath, [BIN, "sandbox", "image", "--list", "--sandbox", "local"], {
    encoding: "utf8",
    cwd,
  });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--sandbox must be docker or bwrap/);
});
