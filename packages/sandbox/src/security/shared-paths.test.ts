// Attack: another local user pre-plants symlinks where Hands writes its own files in a shared
// folder (bwrap's synthetic /etc files once lived at a predictable /tmp/hands-etc-<uid>). Hands
// must neither write through them nor pick up files it did not make. Run in a child process
// with its own TMPDIR, so the plant cannot disturb anything else on this machine.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { explicitlySkipped, requireBackend, tempWorkspace } from "../testing.js";

const INDEX = join(dirname(fileURLToPath(import.meta.url)), "..", "index.js");

describe("security: files Hands creates in shared folders (bwrap)", {
  skip: explicitlySkipped("bwrap"),
}, () => {
  test("pre-planted symlinks at the old predictable paths are neither followed nor used", async () => {
    await requireBackend("bwrap");
    // A shared folder like /tmp: anyone may create entries in it.
    const shared = await mkdtemp(join(tmpdir(), "hands-shared-"));
    await chmod(shared, 0o1777);
    const victim = join(shared, "victim");
    await mkdir(victim);
    await writeFile(join(victim, "passwd"), "VICTIM\n");
    await writeFile(join(victim, "hosts"), "6.6.6.6 attacker\n");
    const uid = process.getuid?.() ?? 0;
    await symlink(victim, join(shared, `hands-etc-${uid}`));
    for (const n of ["hands-rt-", "hands-etc"]) await symlink(join(victim, "hosts"), join(shared, `${n}x`));
    const ws = await tempWorkspace();
    try {
      const script = `const m = await import(${JSON.stringify(INDEX)});
const sb = await m.createSandbox({ kind: "bwrap", workspace: ${JSON.stringify(ws.dir)} });
const r = await sb.exec("cat /etc/hosts; grep -c hands /etc/passwd");
process.stdout.write(JSON.stringify(r));
await sb.destroy();`;
      const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        env: { ...process.env, TMPDIR: shared },
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(child.status, 0, child.stderr);
      const r = JSON.parse(child.stdout) as { stdout: string };
      assert.doesNotMatch(r.stdout, /attacker/);
      assert.match(r.stdout, /^127\.0\.0\.1 localhost hands\n::1 localhost ip6-localhost\n1\n$/);
      assert.equal(readFileSync(join(victim, "passwd"), "utf8"), "VICTIM\n");
      assert.equal(readFileSync(join(victim, "hosts"), "utf8"), "6.6.6.6 attacker\n");
      assert.deepEqual(readdirSync(victim).sort(), ["hosts", "passwd"]);
      // What it made instead: a private folder (random name), gone when the process ended.
      const left = readdirSync(shared).filter(
        (n) => n.startsWith("hands-rt-") && !lstatSync(join(shared, n)).isSymbolicLink(),
      );
      assert.deepEqual(left, []);
    } finally {
      await ws.cleanup();
      await rm(shared, { recursive: true, force: true });
    }
  });

  test("the private folder is 0711 and its files cannot be replaced or written through", async () => {
    const { runtimeDir, writePrivateFile } = await import("../runtime-dir.js");
    const dir = runtimeDir();
    const st = lstatSync(dir);
    assert.equal(st.mode & 0o777, 0o711);
    assert.equal(st.uid, process.getuid?.());
    const name = `probe-${process.pid}`;
    writePrivateFile(name, "one");
    assert.throws(() => writePrivateFile(name, "two"), /EEXIST/);
    assert.equal(readFileSync(join(dir, name), "utf8"), "one");
  });
});
