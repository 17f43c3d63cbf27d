// The security suite: hostile commands against each isolating backend. Every test also checks
// that the sandbox still answers and that the host is fine afterwards.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { explicitlySkipped, makeSandbox, requireBackend, TEST_LIMITS, tempWorkspace } from "../testing.js";
import type { Sandbox, SandboxKind } from "../types.js";

function hostProcessesMatching(text: string): number {
  let n = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").includes(text)) n++;
    } catch {
      // exited
    }
  }
  return n;
}

/** Host processes whose pids cgroup path contains `fragment` (a session id or container id). */
function processesInCgroup(fragment: string): number {
  let n = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cg = readFileSync(`/proc/${pid}/cgroup`, "utf8");
      if (cg.split("\n").some((l) => /(^|[:,])pids[:,]|^0::/.test(l) && l.includes(fragment))) n++;
    } catch {
      // exited
    }
  }
  return n;
}

for (const kind of ["bwrap", "docker"] as SandboxKind[]) {
  describe(`security: ${kind}`, { skip: explicitlySkipped(kind) }, () => {
    let sb: Sandbox;
    let ws: { dir: string; cleanup: () => Promise<void> };
    let server: Server;
    let port = 0;
    let hostDir = "";

    before(async () => {
      await requireBackend(kind);
      ws = await tempWorkspace();
      hostDir = await mkdtemp(join(tmpdir(), "hands-host-secret-"));
      await writeFile(join(hostDir, "secret.txt"), "HOST-SECRET");
      process.env["HANDS_TEST_PARENT_SECRET"] = "parent-secret-value";
      server = createServer((_q, r) => r.end("host server"));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      port = (server.address() as { port: number }).port;
      sb = await makeSandbox(kind, ws.dir, { limits: TEST_LIMITS });
    });
    after(async () => {
      await sb?.destroy();
      await ws?.cleanup();
      await rm(hostDir, { recursive: true, force: true });
      server?.close();
    });

    const healthy = async () => {
      const r = await sb.exec("echo ok", { timeoutMs: 10_000 });
      assert.equal(r.stdout, "ok\n", `sandbox unhealthy: ${JSON.stringify(r)}`);
      const h = spawnSync("true");
      assert.equal(h.status, 0, "host cannot start a process");
    };

    test("fork bomb in the foreground: the PID limit holds, the timeout clears it", async () => {
      const r = await sb.exec("bomb() { bomb | bomb; }; bomb", { timeoutMs: 3000 });
      assert.equal(r.timedOut, true, JSON.stringify(r).slice(0, 300));
      let count = 0;
      for (let i = 0; i < 30; i++) {
        count = Number((await sb.exec("ps -e --no-headers | wc -l")).stdout);
        if (count < 20) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.ok(count < 20, `leftover processes: ${count}`);
      await healthy();
    });

    test("fork bomb in the background: the PID limit holds and destroy clears it", async () => {
      const ws2 = await tempWorkspace();
      const s2 = await makeSandbox(kind, ws2.dir, { limits: TEST_LIMITS });
      // Count this sandbox's processes by its cgroup (other tests on this host bomb too).
      const group =
        kind === "docker"
          ? (s2 as unknown as { container_id: string }).container_id
          : `/${(s2 as unknown as { cgroupName: string }).cgroupName}`;
      await s2.exec("bomb() { bomb | bomb & }; bomb", { timeoutMs: 5000 });
      await new Promise((res) => setTimeout(res, 1500));
      const during = processesInCgroup(group);
      assert.ok(during > 10, `the bomb did not run (${during} processes)`);
      assert.ok(during <= TEST_LIMITS.pids, `${during} processes, over the PID limit`);
      assert.equal(spawnSync("true").status, 0, "host cannot start a process");
      await s2.destroy();
      let after = 0;
      for (let i = 0; i < 50; i++) {
        after = processesInCgroup(group);
        if (after === 0) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.equal(after, 0, `processes left after destroy: ${after}`);
      await ws2.cleanup();
      await healthy();
    });

    test("memory bomb: only the command is killed, reported as OOM", async () => {
      const r = await sb.exec("python3 -c 'a = bytearray(600 * 1024 * 1024); print(len(a))'", {
        timeoutMs: 30_000,
      });
      assert.equal(r.exitCode, 137, JSON.stringify(r).slice(0, 300));
      assert.equal(r.oomKilled, true, JSON.stringify(r).slice(0, 400));
      assert.match(r.stderr, /out of memory/);
      await healthy();
    });

    test("infinite loop: the timeout kills the tree", async () => {
      const r = await sb.exec("(while :; do :; done) & while :; do :; done", { timeoutMs: 500 });
      assert.equal(r.timedOut, true, JSON.stringify(r));
      // Nothing but `ps` itself is still running once the kill has landed (the loops are gone).
      let running = "";
      for (let i = 0; i < 30; i++) {
        await new Promise((res) => setTimeout(res, 100));
        running = (
          await sb.exec("ps -eo stat,comm --no-headers | awk '$1 ~ /^R/ && $2 != \"ps\"' | wc -l")
        ).stdout.trim();
        if (running === "0") break;
      }
      assert.equal(running, "0");
      await healthy();
    });

    test("disk fill: /tmp and file sizes are capped", async () => {
      const t = await sb.exec("head -c 400M /dev/zero > /tmp/fill; echo rc=$?; rm -f /tmp/fill");
      assert.match(t.stderr, /No space left|File size limit/);
      const w = await sb.exec(
        "head -c 600M /dev/zero > big.bin; echo rc=$?; ls -l big.bin | awk '{print $5}'; rm -f big.bin",
      );
      assert.doesNotMatch(w.stdout, /rc=0/);
      await healthy();
    });

    test("network off: no TCP to the host, no raw sockets, no DNS, only loopback", async () => {
      const c = await sb.exec(`curl -sS -m 3 http://127.0.0.1:${port}/`, { timeoutMs: 10_000 });
      assert.notEqual(c.exitCode, 0);
      assert.doesNotMatch(c.stdout, /host server/);
      const raw = await sb.exec(
        "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)'",
      );
      assert.notEqual(raw.exitCode, 0);
      assert.match(raw.stderr, /PermissionError|Operation not permitted/);
      const dns = await sb.exec(
        "python3 -c \"import socket; socket.getaddrinfo('hands-test.invalid', 80)\"",
        {
          timeoutMs: 10_000,
        },
      );
      assert.notEqual(dns.exitCode, 0);
      const ifs = await sb.exec("tail -n +3 /proc/net/dev | awk -F: '{print $1}' | tr -d ' '");
      assert.equal(ifs.stdout.trim(), "lo");
      await healthy();
    });

    test("host secrets: parent environment, /root, ~/.ssh, /proc/1/environ, /proc/1/root", async () => {
      const env = await sb.exec("env; cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'");
      assert.doesNotMatch(env.stdout, /parent-secret-value/);
      const home = homedir();
      const r = await sb.exec(
        `ls -A /root 2>/dev/null; ls -A ${home}/.ssh 2>/dev/null; cat ${hostDir}/secret.txt 2>/dev/null; cat /proc/1/root${hostDir}/secret.txt 2>/dev/null; cat /etc/shadow 2>/dev/null; echo end`,
      );
      assert.doesNotMatch(r.stdout, /HOST-SECRET/);
      assert.doesNotMatch(r.stdout, /id_rsa|id_ed25519|authorized_keys/);
      // The host's own password hashes (a container has its image's /etc/shadow, not these).
      const shadow = existsSync("/etc/shadow")
        ? (readFileSync("/etc/shadow", "utf8").split("\n")[0] ?? "")
        : "";
      if (shadow) assert.equal(r.stdout.includes(shadow) && shadow.includes("$"), false);
      await healthy();
    });

    test("writing outside the workspace fails and the host is untouched", async () => {
      const target = join(hostDir, "written-by-sandbox");
      const r = await sb.exec(
        `touch /usr/hands-evil; echo x > /etc/hands-evil; mkdir -p ${hostDir} && echo x > ${target}; echo done`,
      );
      assert.match(r.stdout, /done/);
      assert.equal(existsSync("/usr/hands-evil"), false);
      assert.equal(existsSync("/etc/hands-evil"), false);
      assert.equal(existsSync(target), false);
      await healthy();
    });

    test("kernel settings (/proc/sys) cannot be changed", async () => {
      const before = readFileSync("/proc/sys/vm/swappiness", "utf8");
      const r = await sb.exec(
        "echo 17 > /proc/sys/vm/swappiness && echo WROTE; echo 1 > /proc/sys/kernel/sysrq && echo WROTE",
      );
      assert.doesNotMatch(r.stdout, /WROTE/);
      assert.match(r.stderr, /Read-only file system|Permission denied/);
      assert.equal(readFileSync("/proc/sys/vm/swappiness", "utf8"), before);
      const root = await sb.exec("touch /hands-root-file 2>&1 || echo refused");
      assert.match(root.stdout, /refused/);
      await healthy();
    });

    test("the Docker socket is not reachable", async () => {
      const r = await sb.exec(
        "ls -l /var/run/docker.sock /run/docker.sock 2>&1; curl -sS -m 3 --unix-socket /var/run/docker.sock http://x/version 2>&1; echo end",
      );
      assert.doesNotMatch(r.stdout, /ApiVersion/);
      assert.match(r.stdout, /No such file|Couldn't connect|Failed to connect/);
      await healthy();
    });

    test("host processes are invisible and cannot be traced", async () => {
      const pid = process.pid;
      const r = await sb.exec(
        `cat /proc/${pid}/cmdline 2>/dev/null | tr '\\0' ' '; echo; python3 -c "
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
print('attach', libc.ptrace(16, ${pid}, 0, 0), ctypes.get_errno())
"`,
      );
      assert.doesNotMatch(r.stdout, /node/);
      assert.match(r.stdout, /attach -1 \d+/);
      const n = await sb.exec("ls /proc | grep -c '^[0-9]'");
      assert.ok(
        Number(n.stdout) < 20,
        `sees ${n.stdout} processes: ${(await sb.exec("ps -eo pid,stat,comm")).stdout}`,
      );
      await healthy();
    });

    test("a command printing 1 GB is capped without a memory blow-up", async () => {
      const before = process.memoryUsage().rss;
      const r = await sb.exec("head -c 1G /dev/zero | tr '\\0' y", { timeoutMs: 120_000 });
      assert.equal(r.exitCode, 0);
      assert.equal(r.truncated, true);
      assert.equal(r.stdoutBytes, 1024 ** 3);
      assert.ok(r.stdout.length < 2 * 1024 * 1024);
      assert.ok(process.memoryUsage().rss - before < 300 * 1024 * 1024, "host memory grew too much");
      await healthy();
    });

    test("no process survives destroy", async () => {
      const ws2 = await tempWorkspace();
      const s2 = await makeSandbox(kind, ws2.dir, { limits: TEST_LIMITS });
      await s2.exec("(sleep 777.25 &); nohup sleep 777.25 >/dev/null 2>&1 & setsid sleep 777.25 & true");
      assert.ok(hostProcessesMatching("sleep 777.25") >= 1);
      await s2.destroy();
      for (let i = 0; i < 50 && hostProcessesMatching("sleep 777.25") > 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      assert.equal(hostProcessesMatching("sleep 777.25"), 0);
      await ws2.cleanup();
    });
  });
}
