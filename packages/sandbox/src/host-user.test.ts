import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { shareWorkspace, unshareWorkspace, withoutShare } from "./host-user.js";

const LISTING = `# file: /w
# owner: 0
# group: 0
user::rwx
user:61000:rwx
group::r-x
mask::rwx
other::r-x
default:user::rwx
default:user:61000:rwx
default:group::r-x
default:mask::rwx
default:other::r-x

# file: /w/made\\012by sandbox
# owner: 61000
# group: 61000
user::rw-
user:61000:rwx\t#effective:rw-
group::r-x\t#effective:r--
mask::rw-
other::r--

# file: /w/theirs
# owner: 0
# group: 0
user::rw-
user:1234:r--
user:61000:rw-
group::r--
mask::rw-
other::---
`;

test("withoutShare drops the uid's entries, masks and defaults only they needed, and gives its files back", () => {
  assert.equal(
    withoutShare(LISTING, 61000, { uid: 0, gid: 5 }),
    `# file: /w
# owner: 0
# group: 0
user::rwx
group::r-x
other::r-x

# file: /w/made\\012by sandbox
# owner: 0
# group: 5
user::rw-
group::r--
other::r--

# file: /w/theirs
# owner: 0
# group: 0
user::rw-
user:1234:r--
group::r--
mask::rw-
other::---

`,
  );
});

// Two root Hands processes in sibling workspaces under one private folder (say /root/a and
// /root/b): both give the sandbox uid a pass-through on that folder. One taking its share back
// while the other is just being given its own must not leave the other unable to reach its
// workspace — the registry check and the ACL change were not atomic across processes, and
// bubblewrap then failed with "Can't find source path" in the other run.
test("one process taking its share back never cuts a sibling workspace's way in", {
  skip: process.getuid?.() !== 0 && "needs root (shares are made as root)",
}, async () => {
  const uid = 61_999;
  const parent = mkdtempSync(join(tmpdir(), "hands-share-race-"));
  const hostUser = fileURLToPath(new URL("./host-user.js", import.meta.url));
  // Each child shares, checks at once that the uid can enter its workspace, and takes it back.
  const loop = (ws: string) => `
    const { spawnSync } = await import("node:child_process");
    const h = await import(${JSON.stringify(hostUser)});
    let cut = 0;
    for (let i = 0; i < 40; i++) {
      h.shareWorkspace(${JSON.stringify(ws)}, ${uid});
      const r = spawnSync("/bin/sh", ["-c", "cd \\"$0\\"", ${JSON.stringify(ws)}], { uid: ${uid}, gid: ${uid} });
      if (r.status !== 0) cut++;
      h.unshareWorkspace(${JSON.stringify(ws)});
    }
    console.log(JSON.stringify({ cut }));`;
  try {
    const runs = ["a", "b"].map((n) => {
      const ws = join(parent, n);
      mkdirSync(ws, { mode: 0o700 });
      return new Promise<{ cut: number }>((resolve, reject) => {
        const child = spawn(process.execPath, ["--input-type=module", "-e", loop(ws)], {
          stdio: ["ignore", "pipe", "inherit"],
        });
        let out = "";
        child.stdout.on("data", (c: Buffer) => {
          out += c;
        });
        child.on("error", reject);
        child.on("exit", (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`)),
        );
      });
    });
    const [a, b] = await Promise.all(runs);
    assert.deepEqual([a?.cut, b?.cut], [0, 0], "a sandbox uid lost its way into its workspace mid-share");
    // And once both are done, nothing of the uid is left on the folder above.
    const acl = spawnSync("getfacl", ["-p", "-n", parent], { encoding: "utf8" }).stdout;
    assert.doesNotMatch(acl, new RegExp(`user:${uid}:`));
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});

test("in one process, taking one workspace's share back keeps the way in of another under the same folder", {
  skip: process.getuid?.() !== 0 && "needs root (shares are made as root)",
}, () => {
  const uid = 61_998;
  const parent = mkdtempSync(join(tmpdir(), "hands-share-siblings-"));
  const enters = (ws: string) => spawnSync("/bin/sh", ["-c", 'cd "$0"', ws], { uid, gid: uid }).status === 0;
  try {
    const [a, b] = ["a", "b"].map((n) => {
      const ws = join(parent, n);
      mkdirSync(ws, { mode: 0o700 });
      return ws;
    }) as [string, string];
    shareWorkspace(a, uid);
    shareWorkspace(b, uid);
    assert.ok(enters(a) && enters(b));
    unshareWorkspace(a);
    assert.ok(!enters(a), "a was taken back");
    assert.ok(enters(b), "b lost its way in when a was taken back");
    unshareWorkspace(b);
    assert.ok(!enters(b));
    const acl = spawnSync("getfacl", ["-p", "-n", parent], { encoding: "utf8" }).stdout;
    assert.doesNotMatch(
      acl,
      new RegExp(`user:${uid}:`),
      "the pass-through above is gone once neither is shared",
    );
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});
