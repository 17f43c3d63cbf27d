// `hands sandbox doctor` through the real bin, on this machine's real bubblewrap, Docker and
// gVisor — and with each part broken on purpose: a dockerd that no longer answers (its socket
// left behind), an image of another recipe, a full tmpfs as the data folder, a cgroup tree
// without the pids controller, user namespaces switched off.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { cgroupCheck, checkDocker, type DoctorCheck } from "@hands/sandbox/backends";

const BIN = fileURLToPath(new URL("../bin/hands.js", import.meta.url));
const dir = realpathSync(mkdtempSync(join(tmpdir(), "hands-doctor-test-")));
const mounts: string[] = [];
after(() => {
  for (const m of mounts.reverse()) spawnSync("umount", ["-l", m]);
  rmSync(dir, { recursive: true, force: true });
});
const isRoot = process.getuid?.() === 0;
const dockerUp = (await checkDocker()).ok;

interface Report {
  defaultBackend: string;
  usable: boolean;
  groups: { name: string; checks: DoctorCheck[] }[];
}

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const data = join(dir, `data-${Math.random().toString(36).slice(2)}`);
  return {
    ...process.env,
    HANDS_DATA_DIR: data,
    XDG_CONFIG_HOME: join(dir, "config"),
    E2B_API_KEY: "",
    HANDS_SANDBOX: "",
    ...extra,
  };
}

function doctor(
  args: string[],
  e: NodeJS.ProcessEnv = env(),
): Promise<{ code: number; report: Report; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "sandbox", "doctor", "--json", ...args], {
      cwd: dir,
      env: e,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve({ code: code ?? -1, report: JSON.parse(stdout) as Report, stderr });
      } catch (err) {
        reject(new Error(`not JSON (${(err as Error).message}): ${stdout}\n${stderr}`));
      }
    });
  });
}

const find = (r: Report, id: string) => {
  const c = r.groups.flatMap((g) => g.checks).find((x) => x.id === id);
  assert.ok(c, `no check ${id} in ${JSON.stringify(r)}`);
  return c;
};

test("on this machine every backend checks out, each by a real sandbox or container", {
  skip: !dockerUp && "no Docker Engine here",
}, async () => {
  const { code, report } = await doctor(["--sandbox", "docker"]);
  assert.equal(code, 0, JSON.stringify(report, null, 2));
  for (const id of [
    "bwrap.installed",
    "bwrap.namespaces",
    "bwrap.run",
    "docker.daemon",
    "docker.image",
    "docker.run",
    "gvisor.runtime",
    "data.folder",
    "proxy",
  ])
    assert.equal(find(report, id).status, "ok", `${id}: ${JSON.stringify(find(report, id))}`);
  assert.match(find(report, "docker.run").detail, /ran `true`/);
  assert.match(find(report, "gvisor.runtime").detail, /runsc container ran/);
  assert.equal(find(report, "e2b.service").status, "skip");
  assert.equal(report.usable, true);
});

test("a dockerd that stopped (its socket left behind) is broken with the fix; docker as the default exits 1, bwrap does not", async () => {
  const sock = join(dir, "docker.sock");
  // A Unix socket bound but not listening: what a killed dockerd leaves (connect → ECONNREFUSED).
  const made = spawnSync("python3", [
    "-c",
    `import socket; s = socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(sock)})`,
  ]);
  assert.equal(made.status, 0, made.stderr.toString());
  const e = env({ DOCKER_HOST: `unix://${sock}` });
  const asDocker = await doctor(["--sandbox", "docker"], e);
  assert.equal(asDocker.code, 1);
  const daemon = find(asDocker.report, "docker.daemon");
  assert.equal(daemon.status, "broken");
  assert.match(daemon.detail, /ECONNREFUSED/);
  assert.match(daemon.fix ?? "", /start it: systemctl start docker \(or dockerd &\)/);
  assert.equal(find(asDocker.report, "docker.image").status, "skip");
  assert.equal(find(asDocker.report, "gvisor.runtime").status, "skip");
  assert.match(asDocker.stderr, /the default backend \(docker\) cannot work here/);
  const asBwrap = await doctor(["--sandbox", "bwrap"], e);
  assert.equal(asBwrap.code, 0);
  assert.equal(find(asBwrap.report, "docker.daemon").status, "broken");
});

test("an image of another recipe is not today's: broken, the old tag named, build-image as the fix", {
  skip: !dockerUp && "no Docker Engine here",
}, async () => {
  // The tag is a hash of the recipe; another suite is another recipe, as after an upgrade.
  const { code, report } = await doctor(
    ["--sandbox", "docker"],
    env({ HANDS_DEBIAN_SUITE: "doctor-test-suite" }),
  );
  assert.equal(code, 1);
  const image = find(report, "docker.image");
  assert.equal(image.status, "broken");
  assert.match(image.detail, /\(today's recipe\) is missing; older: hands-sandbox:[0-9a-f]{12}/);
  assert.match(image.fix ?? "", /hands sandbox build-image/);
  assert.equal(find(report, "docker.run").status, "skip");
});

test("a full tmpfs as the data folder: the write fails with ENOSPC, and no backend is usable", {
  skip: !isRoot && "mounting a tmpfs needs root",
}, async () => {
  const mnt = join(dir, "full");
  mkdirSync(mnt);
  assert.equal(spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", mnt]).status, 0);
  mounts.push(mnt);
  const data = join(mnt, "hands");
  mkdirSync(data, { mode: 0o700 });
  spawnSync("dd", ["if=/dev/zero", `of=${join(mnt, "filler")}`, "bs=4k"]); // until the tmpfs is full
  const { code, report } = await doctor(["--sandbox", "bwrap"], env({ HANDS_DATA_DIR: data }));
  assert.equal(code, 1);
  const folder = find(report, "data.folder");
  assert.equal(folder.status, "broken");
  assert.match(folder.detail, /write failed \(ENOSPC\)/);
  assert.match(folder.fix ?? "", /filesystem is full/);
  assert.equal(find(report, "data.disk").status, "broken");
});

test("a cgroup tree without the pids controller is broken and names it", {
  skip: !isRoot && "mounting needs root",
}, () => {
  const root = join(dir, "cgroup");
  mkdirSync(root);
  assert.equal(spawnSync("mount", ["-t", "tmpfs", "tmpfs", root]).status, 0);
  mounts.push(root);
  if (spawnSync("test", ["-e", "/sys/fs/cgroup/cgroup.controllers"]).status === 0) {
    // cgroup v2: a child group whose parent delegates memory and cpu but not pids.
    const parent = mkdtempSync("/sys/fs/cgroup/hands-doctor-test-");
    const child = join(parent, "child");
    spawnSync("sh", ["-c", `echo +memory +cpu > ${parent}/cgroup.subtree_control; mkdir ${child}`]);
    const c = cgroupCheck(child);
    spawnSync("rmdir", [child, parent]);
    assert.equal(c.status, "broken");
    assert.match(c.detail, /controller pids not available/);
    return;
  }
  // cgroup v1: the memory and cpu hierarchies, mounted as they are, and no pids hierarchy.
  for (const c of ["memory", "cpu"]) {
    mkdirSync(join(root, c));
    assert.equal(spawnSync("mount", ["--bind", `/sys/fs/cgroup/${c}`, join(root, c)]).status, 0);
    mounts.push(join(root, c));
  }
  const c = cgroupCheck(root);
  assert.equal(c.status, "broken");
  assert.match(c.detail, /v1 at .*: no pids hierarchy/);
  assert.match(c.fix ?? "", /mount -t cgroup -o pids/);
  assert.equal(cgroupCheck("/sys/fs/cgroup").status, "ok");
});

test("user namespaces switched off: bwrap cannot start, the sysctl and its fix are named, exit 1", {
  skip: !isRoot && "needs root to make the user namespace",
}, async () => {
  // A user namespace (uids 0–65535 mapped to the host's) whose max_user_namespaces is 0: inside
  // it an unprivileged user cannot make the namespaces bubblewrap needs, as on a host so set.
  const home = mkdtempSync(join(tmpdir(), "hands-doctor-uid1000-"));
  after(() => rmSync(home, { recursive: true, force: true }));
  chownSync(home, 1000, 1000);
  chmodSync(home, 0o700);
  const inner = [
    "echo 0 > /proc/sys/user/max_user_namespaces",
    `exec setpriv --reuid 1000 --regid 1000 --clear-groups env HOME=${home} HANDS_DATA_DIR=${home}/data XDG_CONFIG_HOME=${home}/config TMPDIR=${home} DOCKER_HOST=unix://${home}/none.sock "${process.execPath}" "${BIN}" sandbox doctor --json --sandbox bwrap`,
  ].join("; ");
  const script = `unshare -U sh -c 'while [ -z "$(cat /proc/self/uid_map)" ]; do sleep 0.02; done; exec sh -c "$0"' ${shq(inner)} &
pid=$!
until [ -e /proc/$pid/uid_map ] && [ "$(readlink /proc/$pid/ns/user)" != "$(readlink /proc/self/ns/user)" ]; do sleep 0.02; done
echo "0 0 65536" > /proc/$pid/uid_map && echo "0 0 65536" > /proc/$pid/gid_map
wait $pid`;
  const r = spawnSync("bash", ["-c", script], { cwd: home, encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 1, `${r.stdout}\n${r.stderr}`);
  const report = JSON.parse(r.stdout) as Report;
  const ns = find(report, "bwrap.namespaces");
  assert.equal(ns.status, "broken");
  assert.match(ns.detail, /max_\*_namespaces exceeded|No space left|ENOSPC/);
  assert.match(ns.fix ?? "", /sysctl -w user\.max_user_namespaces=15000/);
  assert.equal(find(report, "bwrap.run").status, "skip");
  assert.equal(report.usable, false);
});

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

test("a configured hands serve: ok with its key, broken when the key is refused or nothing answers", async () => {
  const { startLoopbackServe } = await import("./testing/serve.js");
  const serve = await startLoopbackServe("doctor");
  try {
    const asE2b = (key: string, url: string) =>
      doctor(["--sandbox", "e2b"], env({ E2B_API_KEY: key, E2B_API_URL: url }));
    const good = await asE2b(serve.key, serve.sdk.apiUrl);
    assert.equal(
      find(good.report, "e2b.service").status,
      "ok",
      JSON.stringify(find(good.report, "e2b.service")),
    );
    assert.equal(good.code, 0);
    const wrongKey = await asE2b(`${serve.key.slice(0, -4)}0000`, serve.sdk.apiUrl);
    const refused = find(wrongKey.report, "e2b.service");
    assert.equal(refused.status, "broken");
    assert.match(refused.detail, /refused the key \(401\)/);
    assert.equal(wrongKey.code, 1);
  } finally {
    await serve.close();
  }
  const gone = await doctor(
    ["--sandbox", "e2b"],
    env({ E2B_API_KEY: "e2b_x", E2B_API_URL: serve.sdk.apiUrl }),
  );
  const down = find(gone.report, "e2b.service");
  assert.equal(down.status, "broken");
  assert.match(down.detail, /is not reachable \(.*ECONNREFUSED/);
  assert.match(down.fix ?? "", /hands serve/);
  assert.equal(gone.code, 1);
});
