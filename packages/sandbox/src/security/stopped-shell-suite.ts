// Attack: a command signals its own session shell (in a job, `$$` is the session shell's PID).
// SIGSTOP leaves a shell that reads nothing: before, the command — and every later one — waited
// for its whole timeout (60 s by default). SIGKILL ends the session. Either way the command gets
// a clear error within moments, the next one runs in a fresh session that says so, and no
// state of the old session (an exported variable, the working directory) reaches it.
// Where the shell is its PID namespace's init (bwrap: PID 1), the kernel drops both signals
// from inside: the shell goes on, and so does the session with its own state.
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { after, before, describe, test as nodeTest } from "node:test";
import { explicitlySkipped, makeSandbox, requireBackend, tempWorkspace } from "../testing.js";
import type { Sandbox, SandboxKind } from "../types.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The suite, on each backend; `only` picks cases by the start of their name (the fast one runs
 * in the default suite, the rest in the heavy one).
 */
export function stoppedShellSuite(only: (name: string) => boolean): void {
  for (const kind of ["bwrap", "docker", "local"] as SandboxKind[]) {
    const test = (name: string, fn: () => Promise<void>) => (only(name) ? nodeTest(name, fn) : undefined);
    describe(`a command stops or kills its session shell: ${kind}`, { skip: explicitlySkipped(kind) }, () => {
      let sb: Sandbox;
      let ws: { dir: string; cleanup: () => Promise<void> };
      /** The shell is PID 1 of its namespace: SIGSTOP and SIGKILL from inside do not reach it. */
      let immune = false;
      before(async () => {
        await requireBackend(kind);
        ws = await tempWorkspace();
        sb = await makeSandbox(kind, ws.dir);
        immune = kind !== "local" && (await sb.exec("echo $$")).stdout === "1\n";
      });
      after(async () => {
        await sb?.destroy();
        await ws?.cleanup();
      });

      /** Leaves state in the session (where there is one), so that a fresh session shows. */
      async function plant(): Promise<void> {
        const r = await sb.exec("mkdir -p deep && cd deep && export PLANTED=yes; echo ok");
        assert.equal(r.stdout, "ok\n");
      }

      /**
       * The next command runs at once, in a fresh session without the planted state (or, where
       * the shell is immune, in the same session with it).
       */
      async function nextIsFresh(note = true): Promise<void> {
        const t = performance.now();
        const r = await sb.exec("echo next; echo x$PLANTED; pwd", { timeoutMs: 20_000 });
        const ms = performance.now() - t;
        assert.ok(ms < 8000, `the next command took ${Math.round(ms)} ms`);
        const home = kind === "local" ? sb.workspace : "/workspace";
        assert.equal(r.stdout, immune ? "next\nxyes\n/workspace/deep\n" : `next\nx\n${home}\n`);
        assert.equal(r.exitCode, 0);
        if (immune || !note) assert.doesNotMatch(r.stderr, /session/);
        else if (kind !== "local") assert.match(r.stderr, /previous sandbox session had ended.*fresh one/);
        const again = await sb.exec("echo again; cd /workspace 2>/dev/null; true");
        assert.equal(again.stdout, "again\n");
        assert.equal(again.stderr, "");
      }

      test("SIGSTOP of the shell by the command itself: a clear error in moments, not the timeout", async () => {
        await plant();
        const t = performance.now();
        const r = await sb.exec("kill -STOP $$; echo after", { timeoutMs: 30_000 });
        const ms = performance.now() - t;
        assert.ok(ms < 5000, `took ${Math.round(ms)} ms`);
        assert.equal(r.timedOut, false);
        if (immune) {
          assert.deepEqual([r.stdout, r.exitCode], ["after\n", 0]);
          return nextIsFresh();
        }
        assert.equal(r.exitCode, null);
        assert.match(r.stderr, /session was ended: its shell was stopped \(SIGSTOP\).*state is lost/);
        // (The job runs on while its shell is stopped: "after" may or may not be in its output.)
        await nextIsFresh();
      });

      test("SIGSTOP of the idle shell by a process the command left: the next command runs fresh", async () => {
        await plant();
        const r = await sb.exec("(sleep 0.3; kill -STOP $$) >/dev/null 2>&1 & echo left", {
          keepBackground: true,
        });
        assert.equal(r.stdout, "left\n");
        await sleep(1500);
        await nextIsFresh();
      });

      test("SIGKILL of the shell by the command: the session ended, the next command runs fresh", async () => {
        await plant();
        const t = performance.now();
        const r = await sb.exec("kill -KILL $$; sleep 5; echo after", { timeoutMs: 30_000 });
        if (immune) {
          assert.deepEqual([r.stdout, r.exitCode], ["after\n", 0]);
          return nextIsFresh();
        }
        assert.ok(performance.now() - t < 5000);
        assert.equal(r.exitCode, null);
        assert.match(r.stderr, /session ended; its state is lost/);
        assert.doesNotMatch(r.stdout, /after/);
        await nextIsFresh();
      });

      test("a stopper that keeps stopping the shell gets no command run beside it", async () => {
        await plant();
        // Stops the shell every 20 ms for 3 s: each command either runs in a fresh session or
        // fails clearly; none hangs, none sees the old state.
        await sb.exec("(for i in $(seq 150); do kill -STOP $$; sleep 0.02; done) >/dev/null 2>&1 &", {
          keepBackground: true,
          timeoutMs: 20_000,
        });
        let ended = 0;
        for (let i = 0; i < 3; i++) {
          const t = performance.now();
          const r = await sb.exec("echo x$PLANTED", { timeoutMs: 20_000 });
          assert.ok(performance.now() - t < 8000);
          if (r.exitCode === 0) {
            // The old session's state, only in the old session.
            const fresh = /fresh one/.test(r.stderr);
            if (fresh) ended++;
            assert.equal(r.stdout, fresh || ended > 0 || kind === "local" ? "x\n" : "xyes\n");
          } else {
            ended++;
            assert.match(r.stderr, /session (was )?ended/);
          }
          await sleep(100);
        }
        // (local: the stopper is in the command's group, killed when it returns — maybe before
        // its first stop, maybe after.)
        if (kind !== "local") assert.equal(ended > 0, !immune, `sessions ended: ${ended}`);
        await sleep(3000);
        await nextIsFresh(false);
      });
    });
  }
}
