// Fork, snapshots and file metadata on the docker backend and on gVisor, through the official
// `e2b` SDK: the sandbox's folder is its writable state there too (the image's root is
// read-only), so a fork and a snapshot carry it whole. gVisor's bind mounts keep no extended
// attributes: metadata is refused there with the reason, never dropped.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Sandbox } from "e2b";
import { dockerSkip, startTestServe, type TestServe } from "./test-support.js";

// As in e2b-docker.test.ts: dockerd may keep a destroyed container's exec stream open.
after(() => {
  setTimeout(() => process.exit(), 2000).unref();
});

let s: TestServe | undefined;
before(async () => {
  s = await startTestServe();
});
after(async () => {
  await s?.stop();
});

for (const [template, runtime] of [
  ["docker", undefined],
  ["gvisor", "runsc"],
] as const) {
  describe(`fork and snapshots through the e2b SDK (${template})`, {
    skip: await dockerSkip(runtime),
    timeout: 180_000,
  }, () => {
    const made: Sandbox[] = [];
    after(async () => {
      await Promise.all(made.map((x) => x.kill().catch(() => {})));
    });

    it("forks and snapshots the sandbox's files; metadata kept where the filesystem can", async () => {
      const sb = await Sandbox.create(template);
      made.push(sb);
      await sb.files.write("app/state.txt", "before fork");
      await sb.commands.run("chmod 640 app/state.txt && ln -s /etc/hostname app/link");
      if (template === "gvisor") {
        await assert.rejects(
          sb.files.write("app/meta.txt", "m", { metadata: { k: "v" } }),
          /extended attributes are not supported/,
        );
      } else {
        await sb.files.write("app/meta.txt", "m", { metadata: { k: "v" } });
        assert.deepEqual((await sb.files.getInfo("app/meta.txt")).metadata, { k: "v" });
      }
      const [fork] = await sb.fork({ timeoutMs: 120_000 });
      assert.ok(fork instanceof Sandbox, String(fork));
      made.push(fork);
      assert.equal(await fork.files.read("app/state.txt"), "before fork");
      const st = await fork.commands.run("find app/state.txt -printf '%m\\n'; readlink app/link");
      assert.equal(st.stdout, "640\n/etc/hostname\n", st.stderr);
      if (template !== "gvisor")
        assert.deepEqual((await fork.files.getInfo("app/meta.txt")).metadata, { k: "v" });
      await fork.files.write("app/state.txt", "fork's own");
      assert.equal(await sb.files.read("app/state.txt"), "before fork");

      const snap = await sb.createSnapshot();
      const restored = await Sandbox.create(snap.snapshotId);
      made.push(restored);
      assert.equal(
        (await restored.getInfo()).templateId,
        template,
        "a snapshot's sandbox runs on its source's backend",
      );
      assert.equal(await restored.files.read("app/state.txt"), "before fork");
      assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId), true);
    });
  });
}
