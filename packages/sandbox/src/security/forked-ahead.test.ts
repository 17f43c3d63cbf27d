// Attack: the job a session forks ahead for its next command (session-script.ts, __h_ahead)
// waits in the sandbox between commands. Stopped or killed while it waits — by the host here,
// the only party that can reach it: it is forked only when no sandboxed process is left — the
// next command must still run, once, with its own output and the session's state, and must not
// hang; a leftover that stops or kills every process it can see gets no waiting job to meddle
// with (none is forked while it lives) and is killed before the next command as before.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { explicitlySkipped, makeSandbox, requireBackend, TEST_LIMITS, tempWorkspace } from "../testing.js";
import type { Sandbox, SandboxKind } from "../types.js";

/** The cgroup folders that may list a sandbox's processes (as bench/sandbox-cpu.mjs finds them). */
function groupDirs(kind: SandboxKind, sb: Sandbox): string[] {
  const s = sb as unknown as { cgroup?: { dirs: string[] }; containerId?: string };
  if (kind === "bwrap") return s.cgroup ? [...s.cgroup.dirs].reverse() : [];
  const id = s.containerId ?? "";
  return [
    `/sys/fs/cgroup/pids/docker/${id}`,
    `/sys/fs/cgroup/system.slice/docker-${id}.scope`,
    `/sys/fs/cgroup/docker/${id}`,
  ];
}

interface Proc {
  pid: number;
  ppid: number;
  nsPid: number;
  state: string;
}

/** The processes of the sandbox's cgroup folders and all their descendants. */
function processes(dirs: string[]): Proc[] {
  const todo: number[] = [];
  for (const d of dirs) {
    try {
      todo.push(...readFileSync(join(d, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number));
    } catch {
      // Not this one.
    }
  }
  const seen = new Set<number>();
  const out: Proc[] = [];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const field = (k: string) => new RegExp(`^${k}:\\s*(.*)$`, "m").exec(status)?.[1] ?? "";
      out.push({
        pid,
        ppid: Number(field("PPid")),
        nsPid: Number(field("NSpid").split(/\s+/).at(-1)),
        state: field("State").slice(0, 1),
      });
      todo.push(
        ...readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number),
      );
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

for (const kind of ["bwrap", "docker"] as SandboxKind[]) {
  describe(`security: the job forked ahead (${kind})`, { skip: explicitlySkipped(kind) }, () => {
    let sb: Sandbox;
    let ws: { dir: string; cleanup: () => Promise<void> };
    let shellNsPid = 0;

    before(async () => {
      await requireBackend(kind);
      ws = await tempWorkspace();
      sb = await makeSandbox(kind, ws.dir, { limits: TEST_LIMITS });
      shellNsPid = Number((await sb.exec("echo $$")).stdout.trim());
      assert.ok(shellNsPid > 0);
    });
    after(async () => {
      await sb?.destroy();
      await ws?.cleanup();
    });

    /** The waiting job: the session shell's one live child, once it has been forked. */
    async function waitingJob(): Promise<number> {
      const dirs = groupDirs(kind, sb);
      for (let i = 0; i < 200; i++) {
        const ps = processes(dirs);
        const shell = ps.find((p) => p.nsPid === shellNsPid);
        const jobs = ps.filter((p) => shell && p.ppid === shell.pid && p.state !== "Z");
        if (jobs.length === 1) return jobs[0]!.pid;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no job forked ahead among ${JSON.stringify(processes(dirs))}`);
    }

    /**
     * SIGKILL, then wait until the kernel has ended it (gone, or a zombie): a job still dying
     * when the next command is handed over never takes its frame, and the session then gives
     * up forking ahead for good (by design) — a different case from "killed while it waits".
     */
    async function killWaiting(pid: number): Promise<void> {
      process.kill(pid, "SIGKILL");
      for (let i = 0; i < 200; i++) {
        let state: string | undefined;
        try {
          state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
        } catch {
          return;
        }
        if (state === "Z" || state === "X") return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`job ${pid} still alive 2 s after SIGKILL`);
    }

    /** Until `pid` is in `state` (a signal lands once the process next runs). */
    async function waitState(pid: number, state: string): Promise<void> {
      for (let i = 0; i < 200; i++) {
        if (/^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] === state) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`job ${pid} not in state ${state} after 2 s`);
    }

    const runs = async (command: string, stdout: string) => {
      const r = await sb.exec(command, { timeoutMs: 10_000 });
      assert.equal(r.stdout, stdout, JSON.stringify(r));
      assert.equal(r.exitCode, 0, JSON.stringify(r));
      assert.equal(r.timedOut, false);
      assert.ok(r.durationMs < 5_000, `took ${r.durationMs} ms`);
      assert.doesNotMatch(r.stderr, /left running/, r.stderr);
      return r;
    };

    test("a direct command leaves one job waiting for the next, which runs it once", async () => {
      await runs("export STATE=kept; cd /tmp", "");
      await waitingJob();
      await runs("echo $STATE $PWD; echo once >> /tmp/count", "kept /tmp\n");
      await runs("wc -l < /tmp/count", "1\n");
    });

    test("stopped while it waits, it is replaced: the next command runs once, with the session's state", async () => {
      // Repeated: a stopped job that was continued instead made bash answer "stopped" (exit 147)
      // for the command's status in some rounds (CI, docker: round 2 of 20).
      await runs("export STOPPED=1", "");
      for (let i = 0; i < 20; i++) {
        const job = await waitingJob();
        process.kill(job, "SIGSTOP");
        await waitState(job, "T");
        await runs(`echo stopped=$STOPPED ${i}; echo x >> /tmp/stopped`, `stopped=1 ${i}\n`);
      }
      await runs("wc -l < /tmp/stopped", "20\n");
    });

    test("killed while it waits, a new job runs the next command: nothing lost, nothing twice", async () => {
      await runs("export KILLED=1; rm -f /tmp/twice", "");
      await killWaiting(await waitingJob());
      await runs("echo killed=$KILLED; echo x >> /tmp/twice", "killed=1\n");
      // Killed and not yet reaped (a zombie), too.
      const job = await waitingJob();
      await killWaiting(job);
      await runs("echo again; echo x >> /tmp/twice", "again\n");
      await runs("wc -l < /tmp/twice", "2\n");
    });

    test("a leftover that stops and kills every other child of the session shell meets no waiting job, and is killed", async () => {
      // $$ in a command is the session shell's PID; the leftover spares its own command's job.
      const attack =
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
        'j=$BASHPID; (end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do for p in /proc/[0-9]*; do p=${p#/proc/}; IFS= read -r s < /proc/$p/stat 2>/dev/null || continue; s=${s##*) }; s=${s#* }; [ "${s%% *}" = $$ ] && [ "$p" != $j ] && [ "$p" != $BASHPID ] && { kill -STOP "$p"; kill -KILL "$p"; } 2>/dev/null; done; done) & echo planted';
      const r = await sb.exec(attack);
      assert.equal(r.stdout, "planted\n", JSON.stringify(r));
      assert.match(r.stderr, /left running in the background/);
      await runs("echo after the leftover", "after the leftover\n");
      await runs("echo and after that", "and after that\n");
    });

    test("a command with stdin, or one that keeps its processes, is run by a new job (the waiting one is killed)", async () => {
      await runs("true", "");
      const before = await waitingJob();
      const r = await sb.exec("cat", { stdin: "from stdin" });
      assert.equal(r.stdout, "from stdin");
      assert.ok(!processes(groupDirs(kind, sb)).some((p) => p.pid === before), "the waiting job was killed");
      const k = await sb.exec("sleep 30 & echo kept", { keepBackground: true });
      assert.equal(k.stdout, "kept\n");
      // While a kept process lives, no job waits ahead.
      await new Promise((res) => setTimeout(res, 100));
      const shell = processes(groupDirs(kind, sb)).find((p) => p.nsPid === shellNsPid);
      const kids = processes(groupDirs(kind, sb)).filter((p) => p.ppid === shell?.pid && p.state !== "Z");
      assert.ok(
        kids.every((p) => p.nsPid !== 0),
        JSON.stringify(kids),
      );
      const pids = (k.background ?? []).map((b) => b.pid).join(" ");
      await runs(`kill -9 ${pids}; echo done`, "done\n");
    });
  });
}
