// Attack: sandboxed code as host root. With a root-owned workspace (CI runs as root), a
// command copies bash and makes it setuid; a host user then runs it for a root shell.
// Sandboxed code must never be host root, and nothing it creates may be setuid/setgid.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { explicitlySkipped, makeSandbox, requireBackend, tempWorkspace } from "../testing.js";
import type { SandboxKind } from "../types.js";

const asRoot = process.getuid?.() === 0;

for (const kind of ["bwrap", "docker"] as SandboxKind[]) {
  describe(`security: host identity (${kind})`, {
    skip: explicitlySkipped(kind) ?? (!asRoot && "needs root, as CI runs"),
  }, () => {
    test("root-owned workspace: no host-root files, no setuid binary, the workspace stays writable", async () => {
      await requireBackend(kind);
      const ws = await tempWorkspace();
      const outside = await mkdtemp(join(tmpdir(), "hands-outside-"));
      await writeFile(join(outside, "host-file"), "host");
      await writeFile(join(ws.dir, "tracked.txt"), "from the user\n");
      // A symlink leading out: sharing the workspace must not grant anything through it.
      await symlink(outside, join(ws.dir, "link-out"));
      const sb = await makeSandbox(kind, ws.dir);
      try {
        const r = await sb.exec(
          "cp /bin/bash x; chmod 4755 x; chmod g+s x; install -m 6755 /bin/bash y; echo more >> tracked.txt; echo new > made.txt; id -u",
        );
        assert.notEqual(r.stdout.trim(), "", JSON.stringify(r));
        for (const f of ["x", "made.txt"]) {
          const st = await stat(join(ws.dir, f));
          assert.notEqual(st.uid, 0, `${f} is owned by host root`);
          assert.equal(st.mode & 0o6000, 0, `${f} carries setuid/setgid bits: ${st.mode.toString(8)}`);
        }
        const y = await stat(join(ws.dir, "y")).catch(() => undefined);
        if (y) assert.equal(y.mode & 0o6000, 0, `y carries setuid/setgid bits: ${y.mode.toString(8)}`);
        // The host-side check of the attack: an unprivileged host user runs the planted binary.
        const run = spawnSync(
          "setpriv",
          ["--reuid=1000", "--regid=1000", "--clear-groups", join(ws.dir, "x"), "-p", "-c", "id -u"],
          { encoding: "utf8", cwd: "/" },
        );
        assert.equal(
          run.stdout.trim(),
          "1000",
          `planted binary gave euid ${run.stdout.trim()} ${run.stderr}`,
        );
        assert.equal((await stat(join(ws.dir, "tracked.txt"))).uid, 0, "the user's file changed owner");
        assert.match(
          (await sb.readFile("tracked.txt")).toString(),
          /^from the user\nmore\n$/,
          "the sandbox could not write the root-owned workspace",
        );
        const acl = spawnSync("getfacl", ["-p", "--omit-header", join(outside, "host-file")], {
          encoding: "utf8",
        });
        assert.doesNotMatch(acl.stdout, /user:\d+:/, `the share went through the symlink: ${acl.stdout}`);
      } finally {
        await sb.destroy();
        await ws.cleanup();
        await rm(outside, { recursive: true, force: true });
      }
    });

    test("a workspace below a private folder (0700, like /root) still works as that uid", async () => {
      await requireBackend(kind);
      const parent = await mkdtemp(join(tmpdir(), "hands-private-parent-"));
      const ws = join(parent, "ws");
      await mkdir(ws);
      await writeFile(join(ws, "a.txt"), "a\n");
      const sb = await makeSandbox(kind, ws);
      try {
        const r = await sb.exec("cat a.txt; echo b > b.txt && id -u");
        assert.equal(r.exitCode, 0, JSON.stringify(r));
        assert.match(r.stdout, /^a\n[1-9]\d*\n$/);
        assert.equal((await stat(parent)).mode & 0o007, 0, "the private folder was opened to others");
      } finally {
        await sb.destroy();
        await rm(parent, { recursive: true, force: true });
      }
    });

    test("the share is taken back after the run: no ACL entry, no file owned by the sandbox uid", async () => {
      await requireBackend(kind);
      const parent = await mkdtemp(join(tmpdir(), "hands-private-parent-"));
      const ws = join(parent, "ws");
      await mkdir(join(ws, "sub"), { recursive: true });
      await writeFile(join(ws, "tracked.txt"), "from the user\n", { mode: 0o640 });
      const sb = await makeSandbox(kind, ws);
      let destroyed = false;
      try {
        const r = await sb.exec(
          "echo more >> tracked.txt; echo new > made.txt; mkdir -p d/e; echo f > d/e/f; touch \"$(printf 'not\\377utf8')\"",
        );
        assert.equal(r.exitCode, 0, JSON.stringify(r));
        // The host uid the sandbox ran as (inside, bwrap maps it to 1000).
        const uid = String((await stat(join(ws, "made.txt"))).uid);
        // The share exists while the sandbox runs (else the check below proves nothing).
        assert.match(facl(ws, parent), new RegExp(`^user:${uid}:`, "m"));
        await sb.destroy();
        destroyed = true;
        await shareGone(ws, parent, uid);
        assert.equal((await stat(join(ws, "tracked.txt"))).mode & 0o777, 0o640, "the user's mode changed");
        assert.equal(await readFile(join(ws, "tracked.txt"), "utf8"), "from the user\nmore\n");
      } finally {
        if (!destroyed) await sb.destroy();
        await rm(parent, { recursive: true, force: true });
      }
    });

    for (const end of ["process.exit(0)", 'process.kill(process.pid, "SIGTERM")'])
      test(`a process that ends without destroying its sandbox (${end}) takes the share back too`, async () => {
        await requireBackend(kind);
        const parent = await mkdtemp(join(tmpdir(), "hands-private-parent-"));
        const ws = join(parent, "ws");
        await mkdir(ws);
        const index = new URL("../index.js", import.meta.url).href;
        const child = spawnSync(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `const { createSandbox } = await import(process.argv[1]);
           const sb = await createSandbox({ kind: process.argv[2], workspace: process.argv[3] });
           const r = await sb.exec("mkdir -p made/deeper && echo x > made/deeper/f");
           const { statSync } = await import("node:fs");
           process.stdout.write(r.exitCode === 0 ? String(statSync(process.argv[3] + "/made").uid) : JSON.stringify(r));
           ${end};`,
            index,
            kind,
            ws,
          ],
          { encoding: "utf8", timeout: 120_000 },
        );
        try {
          assert.ok(
            child.status === 0 || child.signal === "SIGTERM",
            `${child.status} ${child.signal} ${child.stderr}`,
          );
          await shareGone(ws, parent, child.stdout.trim());
        } finally {
          await rm(parent, { recursive: true, force: true });
        }
      });
  });
}

/** getfacl of everything below `ws` and of `parent` (numeric ids). */
function facl(ws: string, parent: string): string {
  const r = spawnSync("getfacl", ["-R", "-P", "-n", "-p", "--", ws, parent], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** Waits (bounded) until no trace of `uid` is left in the ACLs and owners below `ws`. */
async function shareGone(ws: string, parent: string, uid: string): Promise<void> {
  assert.match(uid, /^[1-9]\d*$/);
  let acl = "";
  for (let i = 0; i < 150; i++) {
    acl = facl(ws, parent);
    if (!/^(default:)?user:\d+:|^mask::|^default:|^# (owner|group): [1-9]/m.test(acl)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`the share of uid ${uid} is still there:\n${acl}`);
}
