// Attack: sandboxed code as host root. With a root-owned workspace (CI runs as root), a
// command copies bash and makes it setuid; a host user then runs it for a root shell.
// Sandboxed code must never be host root, and nothing it creates may be setuid/setgid.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
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
  });
}
