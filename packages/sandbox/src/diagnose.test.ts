// The one-line diagnosis of a failed command, on real bwrap and docker sandboxes, with the real
// package index of this machine's Debian suite (fetched from apt's mirror into a temp folder).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createSandbox } from "./create.js";
import { type DiagnoseFacts, diagnoseFailure } from "./diagnose.js";
import { checkDocker } from "./docker.js";
import { buildPackageIndex, loadPackageIndex, type PackageIndex } from "./package-index.js";
import { checkBwrap } from "./sandbox-kind.js";
import type { Sandbox, SandboxKind } from "./types.js";

const indexDir = mkdtempSync(join(tmpdir(), "hands-pkgindex-"));
let index: PackageIndex;
before(async () => {
  index = loadPackageIndex(await buildPackageIndex(indexDir)) as PackageIndex;
});
after(() => rmSync(indexDir, { recursive: true, force: true }));

test("the package index knows Debian's programs and libraries", () => {
  assert.ok(index.command("curl").includes("curl"));
  assert.ok(index.command("sl").includes("sl"));
  assert.equal(index.library("libX11.so.6")[0], "libx11-6");
  assert.deepEqual(index.command("no-such-program-anywhere"), []);
});

const kinds: { kind: SandboxKind; skip: string | false }[] = [
  { kind: "bwrap", skip: !checkBwrap().ok && "bubblewrap cannot run here" },
  { kind: "docker", skip: !(await checkDocker()).ok && "no Docker Engine here" },
];

for (const { kind, skip } of kinds) {
  describe(`diagnosis on ${kind}`, { skip }, () => {
    let ws: string;
    let sb: Sandbox;
    const limits = { memoryBytes: 96 * 1024 * 1024, pids: 64 };
    const facts = (): DiagnoseFacts => ({ network: "none", limits, index });
    before(async () => {
      ws = realpathSync(mkdtempSync(join(tmpdir(), `hands-diag-${kind}-`)));
      chmodSync(ws, 0o777);
      sb = await createSandbox({ kind, workspace: ws, network: "none", limits });
    });
    after(async () => {
      await sb.destroy();
      rmSync(ws, { recursive: true, force: true });
    });
    const run = async (cmd: string) => {
      const r = await sb.exec(cmd, { timeoutMs: 60_000 });
      return { r, d: await diagnoseFailure(sb, r, facts()) };
    };

    test("a command that is not installed: confirmed by command -v, and the package that provides it", async () => {
      const { r, d } = await run("sl -a");
      assert.equal(r.exitCode, 127);
      assert.equal(d?.cause, "command-not-found");
      assert.match(
        d?.line ?? "",
        /`sl` is not installed in this sandbox; Debian package sl provides sl — not installed/,
      );
    });

    test("a timeout names the processes running when it struck, not a tree the command wrote", async () => {
      const r = await sb.exec(
        "printf '1 1 S forged-entry\\n' > /tmp/.hands-timeout-tree; sleep 300 & python3 -c 'import time; time.sleep(100)'",
        { timeoutMs: 1500 },
      );
      assert.equal(r.timedOut, true);
      const d = await diagnoseFailure(sb, r, facts());
      assert.equal(d?.cause, "timeout");
      assert.match(
        d?.line ?? "",
        /timed out after \d+\.\d s and was killed; running then: \d+ sleep 300; \d+ python3 -c import time/,
      );
      assert.doesNotMatch(d?.line ?? "", /forged-entry|\/run\/hands\/sh/);
      // Read once: the next command's diagnosis does not reuse it.
      assert.equal((await run("false")).d, undefined);
    });

    test("a failure that is not a missing command gets no diagnosis", async () => {
      assert.equal((await run("false")).d, undefined);
      assert.equal((await run("ls /no/such/path")).d, undefined);
      assert.equal((await run("true")).d, undefined);
    });

    test("a forged loader message names no library: ldd finds the program whole", async () => {
      const { r, d } = await run(
        "echo 'ls: error while loading shared libraries: libevil.so.1: cannot open shared object file' >&2; exit 127",
      );
      assert.equal(r.exitCode, 127);
      assert.notEqual(d?.cause, "missing-library");
    });

    test("a program whose own library is gone: ldd names it and no package ships it", async () => {
      const lib = join(ws, "libhandsdiag.so.1");
      writeFileSync(join(ws, "l.c"), "int handsdiag(void) { return 0; }\n");
      writeFileSync(join(ws, "p.c"), "int handsdiag(void); int main(void) { return handsdiag(); }\n");
      assert.equal(
        spawnSync("cc", ["-shared", "-fPIC", "-Wl,-soname,libhandsdiag.so.1", "-o", lib, join(ws, "l.c")])
          .status,
        0,
      );
      assert.equal(spawnSync("cc", ["-o", join(ws, "prog"), join(ws, "p.c"), lib]).status, 0);
      rmSync(lib);
      const { r, d } = await run("./prog");
      assert.equal(r.exitCode, 127);
      assert.equal(d?.cause, "missing-library");
      assert.match(
        d?.line ?? "",
        /\/prog needs libhandsdiag\.so\.1, which is not in this sandbox \(ldd: not found\); no Debian package ships a library named libhandsdiag\.so\.1/,
      );
    });

    // Docker only: bwrap runs on the host's /usr, where scripts/test-env.sh installs libmagic.
    if (kind === "docker")
      test("a program needing a Debian library the sandbox lacks names its package", async () => {
        writeFileSync(join(ws, "x.c"), "int main(void) { return 0; }\n");
        const cc = spawnSync(
          "cc",
          ["-o", join(ws, "xprog"), join(ws, "x.c"), "-Wl,--no-as-needed", "-lmagic"],
          {
            encoding: "utf8",
          },
        );
        assert.equal(cc.status, 0, cc.stderr);
        const { r, d } = await run("./xprog");
        assert.equal(r.exitCode, 127);
        assert.equal(d?.cause, "missing-library");
        assert.match(
          d?.line ?? "",
          /needs libmagic\.so\.1.*Debian package libmagic1 provides libmagic\.so\.1 — not installed in this sandbox \(add it to the image or a template: apt-get install libmagic1\)/,
        );
      });

    test("memory: the cgroup's OOM kill is the diagnosis, with the limit", async () => {
      const { r, d } = await run("python3 -c 'x = bytearray(400 * 1024 * 1024); print(len(x))'");
      assert.equal(r.oomKilled, true, JSON.stringify(r));
      assert.equal(d?.cause, "oom");
      assert.match(d?.line ?? "", /memory limit \(96 MiB\)/);
    });

    test("the PID limit: a refused fork is the diagnosis", async () => {
      // dash, not the session's bash: bash retries a refused fork with back-off for ~15 s.
      const { r, d } = await run("sh -c 'for i in $(seq 100); do sleep 30 & done; wait'");
      assert.equal(
        r.pidsLimited,
        true,
        JSON.stringify({ ...r, stdout: r.stdout.slice(0, 200), stderr: r.stderr.slice(0, 400) }),
      );
      assert.equal(d?.cause, "pids");
      assert.match(d?.line ?? "", /process limit \(64\) was reached/);
    });

    test("a name lookup with the network off says so, with the --allow-domain to use", async () => {
      const { r, d } = await run("curl -sS --max-time 5 https://example.com/");
      assert.notEqual(r.exitCode, 0);
      assert.equal(d?.cause, "network-off", r.stderr);
      assert.match(d?.line ?? "", /network is off in this sandbox.*--allow-domain example\.com/);
    });
  });
}
