// Attack: another local user reads the sandboxes' files. A second, unprivileged account on the
// host looks for sandbox ids and the session script in every process's command line, cgroup,
// environment and mount table, lists the service's data folder, and reads a tenant's ~/secret.txt by its
// path and through /proc/PID/root — for a `hands serve` sandbox and for a bwrap sandbox as a
// plain `hands` run makes it. Every attempt must fail. Needs root (as CI runs): it creates the
// account and runs as it.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BwrapSandbox, checkBwrap } from "@hands/sandbox";
import { Sandbox } from "e2b";
import { startTestServe, type TestServe } from "./test-support.js";

const ATTACKER = "hands-attacker";
const VICTIM = "hands-victim";
const asRoot = process.getuid?.() === 0;
const skip = !asRoot
  ? "needs root (as CI runs): it creates a second local user and attacks as that user"
  : checkBwrap().ok
    ? false
    : `bubblewrap is not usable here: ${checkBwrap().reason}`;

/** A local account (made when missing): an ordinary unprivileged user. */
function account(name: string): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync("id", [flag, name], { encoding: "utf8" });
  if (id("-u").status !== 0) {
    const r = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], {
      encoding: "utf8",
    });
    assert.equal(r.status, 0, `useradd ${name}: ${r.stderr}`);
  }
  return { uid: Number(id("-u").stdout), gid: Number(id("-g").stdout) };
}

/** How a command runs as `user`: setpriv, no supplementary groups. */
function asUser(user: { uid: number; gid: number }): string[] {
  return ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups"];
}

/**
 * Everything the attacker tries, as that user. What it is after comes in the environment, so no
 * command line of its own carries the sandbox id (the scan would find itself). Prints LEAK for
 * each attempt that worked, SEEN when it could see the sandbox's processes at all.
 */
const ATTACK = String.raw`
# (The attacker's own processes carry what it looks for in their environment: skipped.)
for f in /proc/[0-9]*/cmdline; do
  [ -O "${"${"}f%/*}" ] && continue
  c=$(tr '\0' ' ' < "$f" 2>/dev/null) || continue
  case "$c" in bwrap*|*/run/hands/sh*) echo "SEEN $f: $c" ;; esac
  case "$c" in *"$ID"*|*"$WS"*|*"__h_"settle*|*"__h_"scan*) echo "LEAK cmdline $f: $c" ;; esac
done
for f in /proc/[0-9]*/cgroup /proc/[0-9]*/environ /proc/[0-9]*/mountinfo /proc/net/unix; do
  [ "$f" != /proc/net/unix ] && [ -O "${"${"}f%/*}" ] && continue
  grep -q -F -- "$ID" "$f" 2>/dev/null && echo "LEAK id in $f"
done
[ -d /sys/fs/cgroup ] && find /sys/fs/cgroup -maxdepth 4 -name "*$ID*" 2>/dev/null | sed 's/^/LEAK cgroup /'
[ -n "$DATA" ] && ls "$DATA" > /dev/null 2>&1 && echo "LEAK listed $DATA"
[ -n "$DATA" ] && ls "$DATA/sandboxes" > /dev/null 2>&1 && echo "LEAK listed $DATA/sandboxes"
ls "$WS" > /dev/null 2>&1 && echo "LEAK listed $WS"
for f in "$SECRET" /proc/[0-9]*/root$IN_SANDBOX /proc/[0-9]*/root/workspace/home/secret.txt /proc/[0-9]*/cwd/secret.txt; do
  [ -n "$f" ] && cat "$f" 2>/dev/null && echo "LEAK read $f"
done
find "$(dirname "$WS")" -maxdepth 3 -name secret.txt 2>/dev/null | sed 's/^/LEAK found /'
# Someone else's allow-list proxy: its path is public in /proc/net/unix.
for p in $(grep -o '/[^ ]*hands-proxy-[^ ]*' /proc/net/unix | sort -u); do
  echo "SEEN proxy $p"
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$p" 2>/dev/null && echo "LEAK connected to $p"
done
echo DONE
`;

function attack(env: Record<string, string>): string {
  const [cmd, ...args] = asUser(account(ATTACKER));
  const r = spawnSync(cmd as string, [...args, "/bin/bash", "--norc", "-c", ATTACK], {
    encoding: "utf8",
    cwd: "/",
    env: { PATH: "/usr/bin:/bin", ...env },
    timeout: 60_000,
  });
  assert.equal(r.status, 0, `the attack script failed: ${r.stderr}`);
  return r.stdout;
}

function assertNothingLeaked(out: string, secret: string): void {
  assert.match(out, /DONE\n$/, out);
  assert.match(
    out,
    /^SEEN /m,
    `the attacker saw no sandbox process at all (the scan proves nothing): ${out}`,
  );
  const leaks = out.split("\n").filter((l) => l.startsWith("LEAK") || l.includes(secret));
  assert.deepEqual(leaks, [], out);
}

describe("security: another local user against hands serve (bwrap)", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  let sb: Sandbox;
  const secret = `tenant-secret-${process.pid}-${Date.now()}`;

  before(async () => {
    s = await startTestServe();
    sb = await Sandbox.create();
    await sb.commands.run(`echo ${secret} > ~/secret.txt`);
    await sb.files.write("via-api.txt", secret);
    await sb.commands.run("sleep 120", { background: true });
  });
  after(async () => {
    await sb?.kill().catch(() => {});
    await s?.stop();
  });

  it("finds no sandbox id or session script, cannot list the data folder or read a tenant's file", () => {
    const ws = s.service.workspaceOf(sb.sandboxId);
    const path = join(ws, "home", "secret.txt");
    assert.equal(spawnSync("cat", [path], { encoding: "utf8" }).stdout.trim(), secret, "the secret is there");
    const out = attack({
      ID: sb.sandboxId,
      DATA: s.dataDir,
      WS: ws,
      SECRET: path,
      IN_SANDBOX: "/home/user/secret.txt",
    });
    assertNothingLeaked(out, secret);
  });

  it("keeps the folders private: data 0710 (the sandboxes' group passes), sandbox 0700; files E2B's 0644 inside them", () => {
    const ws = s.service.workspaceOf(sb.sandboxId);
    const mode = (p: string) => statSync(p).mode & 0o777;
    assert.equal(mode(s.dataDir), 0o710);
    assert.equal(mode(join(s.dataDir, "sandboxes")), 0o710);
    assert.equal(mode(ws), 0o700);
    assert.equal(mode(join(ws, "home")), 0o700);
    // The 0700 folders above are what keep them from other host users (the attack above).
    assert.equal(mode(join(ws, "home", "secret.txt")), 0o644, "umask 022 in the sandbox, as E2B's");
    assert.equal(mode(join(ws, "home", "via-api.txt")), 0o644, "files written through the API too");
    assert.equal(statSync(join(ws, "home", "secret.txt")).uid, statSync(ws).uid);
    assert.notEqual(statSync(ws).uid, 0);
  });

  it("gives every sandbox a uid of its own", async () => {
    const other = await Sandbox.create();
    try {
      const a = (await sb.commands.run("stat -c %u /workspace")).stdout;
      const b = (await other.commands.run("stat -c %u /workspace")).stdout;
      assert.equal(a, "1000\n", "inside, the sandbox's user is 1000");
      assert.equal(b, "1000\n");
      const ua = statSync(s.service.workspaceOf(sb.sandboxId)).uid;
      const ub = statSync(s.service.workspaceOf(other.sandboxId)).uid;
      assert.notEqual(ua, ub, "two tenants' sandboxes share a host uid");
    } finally {
      await other.kill();
    }
  });
});

describe("security: another local user against a hands run's bwrap sandbox", {
  skip,
  timeout: 60_000,
}, () => {
  let ws: string;
  let sb: BwrapSandbox;
  const secret = `run-secret-${process.pid}-${Date.now()}`;

  before(async () => {
    // A project below a private folder, as a user's home is.
    ws = join(mkdtempSync(join(tmpdir(), "hands-private-run-")), "project");
    spawnSync("mkdir", [ws]);
    sb = await BwrapSandbox.create({ workspace: ws });
    const r = await sb.exec(`echo ${secret} > ~/secret.txt; echo ${secret} > /tmp/secret.txt; sleep 120 &`, {
      keepBackground: true,
    });
    assert.equal(r.exitCode, 0, JSON.stringify(r));
  });
  after(async () => {
    await sb?.destroy();
    rmSync(join(ws, ".."), { recursive: true, force: true });
  });

  it("finds no workspace path or session script, cannot read the sandbox's home or /tmp", async () => {
    assert.equal((await sb.exec("cat ~/secret.txt")).stdout.trim(), secret);
    for (const inside of ["/home/hands/secret.txt", "/tmp/secret.txt"]) {
      const out = attack({ ID: sb.id, WS: ws, SECRET: "", IN_SANDBOX: inside });
      assertNothingLeaked(out, secret);
    }
  });
});

/** A plain `hands` run by another user: a bwrap session behind the allow-list proxy. */
const VICTIM_RUN = `
const { BwrapSandbox, startAllowListProxy } = await import(process.argv[1]);
// What the run is about comes in the environment: its own command line must not name it.
const { VICTIM_WS: ws, VICTIM_SECRET: secret } = process.env;
const proxy = await startAllowListProxy({ allow: ["example.com"] });
const sb = await BwrapSandbox.create({ workspace: ws, network: "proxy", proxySocket: proxy.socketPath });
const r = await sb.exec("echo " + secret + " > ~/secret.txt; echo " + secret + " > /tmp/secret.txt; sleep 120 &", { keepBackground: true });
process.stdout.write(JSON.stringify({ id: sb.id, rc: r.exitCode, err: r.stderr }) + "\\n");
process.stdin.resume();
process.stdin.on("end", async () => { await sb.destroy(); await proxy.close(); process.exit(0); });
`;

describe("security: another local user against a non-root user's hands run", {
  skip,
  timeout: 60_000,
}, () => {
  it("finds no workspace path or script, cannot read the sandbox's home or /tmp, cannot use its proxy", async () => {
    const victim = account(VICTIM);
    const ws = mkdtempSync(join(tmpdir(), "hands-victim-ws-"));
    spawnSync("chown", [`${victim.uid}:${victim.gid}`, ws]);
    const secret = `victim-secret-${process.pid}-${Date.now()}`;
    const [cmd, ...args] = asUser(victim);
    const index = new URL("../../sandbox/dist/index.js", import.meta.url).href;
    const child = spawn(
      cmd as string,
      [...args, process.execPath, "--input-type=module", "-e", VICTIM_RUN, index],
      {
        cwd: "/",
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: ws,
          TMPDIR: "/tmp",
          VICTIM_WS: ws,
          VICTIM_SECRET: secret,
        },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let err = "";
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString("utf8");
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString("utf8");
          if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
        });
        child.once("exit", (code) => reject(new Error(`the victim's run ended (${code}): ${err}`)));
      });
      const started = JSON.parse(line) as { id: string; rc: number; err: string };
      assert.equal(started.rc, 0, started.err);
      for (const inside of ["/home/hands/secret.txt", "/tmp/secret.txt"]) {
        const out = attack({ ID: started.id, WS: ws, SECRET: "", IN_SANDBOX: inside });
        assertNothingLeaked(out, secret);
        assert.match(out, /^SEEN proxy /m, `the attacker did not find the proxy's socket: ${out}`);
      }
    } finally {
      child.stdin.end();
      await new Promise((r) => (child.exitCode === null ? child.once("exit", r) : r(null)));
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
