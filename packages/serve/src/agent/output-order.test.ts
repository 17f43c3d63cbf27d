// A process's output always reaches the host before its exit, however late the agent's output
// readers run. On a loaded machine a reader thread can take a process's last bytes out of the
// pipe and then not run again for a while; the exit must wait for it (issue 29: `echo` commands
// came back with exit code 0 and empty stdout under load). Here that delay is forced: the agent
// (its real source, run as the service runs it, speaking to the real host-side client) gets an
// os.read that sleeps after every read that returned data, so each reader holds its bytes well
// past the exit — every time, not only when the scheduler is unkind.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { AgentClient, type AgentEvent } from "./client.js";
import { AGENT_SOURCE } from "./source.js";

/** Holds each read's bytes this long before the reader may do anything with them. */
const READ_DELAY_S = 0.3;
const PRELUDE = `
import os, time
_read = os.read
def _late_read(fd, n):
    data = _read(fd, n)
    if data:
        time.sleep(${READ_DELAY_S})
    return data
os.read = _late_read
exec(os.environ["HANDS_AGENT_SOURCE"])
`;

interface Run {
  out: Record<1 | 2, string>;
  /** Output events that came after the exit (there must be none). */
  late: number;
  exit: Extract<AgentEvent, { ev: "exit" }>;
  ms: number;
}

describe("agent: output before exit", { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "hs-agent-order-"));
  let server: Server;
  let child: ChildProcess;
  let agent: AgentClient;
  const runs = new Map<
    number,
    { run: Partial<Run> & { out: Record<1 | 2, string>; late: number }; done?: (r: Run) => void }
  >();

  before(async () => {
    mkdirSync(join(dir, "home"));
    const sock = join(dir, "agent.sock");
    server = createServer();
    await new Promise<void>((r) => server.listen(sock, r));
    const connected = new Promise<Socket>((r) => server.once("connection", r));
    child = spawn("python3", ["-c", PRELUDE], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HANDS_AGENT_SOURCE: AGENT_SOURCE,
        HANDS_AGENT_SOCKET: sock,
        HANDS_AGENT_HOME: join(dir, "home"),
        HANDS_AGENT_NONCE: "n",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    agent = new AgentClient(await connected);
    const started = performance.now();
    agent.on("event", (ev: AgentEvent) => {
      if (ev.ev !== "out" && ev.ev !== "exit") return;
      const r = runs.get(ev.pid);
      if (!r) return;
      if (ev.ev === "out") {
        if (r.run.exit) r.run.late++;
        else r.run.out[ev.fd] += Buffer.from(ev.data, "base64").toString();
      } else {
        r.run.exit = ev;
        r.run.ms = performance.now() - started;
        // Late output, if any, would follow within the read delay: look a little longer.
        setTimeout(() => r.done?.(r.run as Run), READ_DELAY_S * 1000 + 200);
      }
    });
    await agent.call("ping");
  });

  /** Process groups of commands that left a child behind (killed at the end). */
  const leftBehind: number[] = [];

  after(async () => {
    for (const pgid of leftBehind)
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {}
    agent?.close();
    child?.kill("SIGKILL");
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(cmd: string, extra: Record<string, unknown> = {}): Promise<Run> {
    const entry = { run: { out: { 1: "", 2: "" }, late: 0 } } as Parameters<typeof runs.set>[1];
    const done = new Promise<Run>((r) => {
      entry.done = r;
    });
    // onReply runs before any event that follows the reply: the pid is known in time.
    await agent.call<{ pid: number }>(
      "start",
      { cmd: "/bin/sh", args: ["-c", cmd], envs: {}, user: "user", ...extra },
      (r) => runs.set(r.pid, entry),
    );
    return done;
  }

  it("sends every byte a command wrote before its exit, on stdout and stderr, many at once", async () => {
    const cmds = Array.from({ length: 40 }, (_, i) => i);
    const results = await Promise.all(
      cmds.map((i) => run(`echo out-${i}; echo err-${i} >&2; exit ${i % 3}`)),
    );
    for (const [i, r] of results.entries()) {
      assert.deepEqual(
        { stdout: r.out[1], stderr: r.out[2], code: r.exit.code, late: r.late },
        { stdout: `out-${i}\n`, stderr: `err-${i}\n`, code: i % 3, late: 0 },
        `command ${i}`,
      );
    }
  });

  it("does the same for a command on a terminal", async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => run(`echo tty-${i}`, { pty: { cols: 80, rows: 24 } })),
    );
    for (const [i, r] of results.entries()) {
      assert.equal(r.out[1].replace(/\r/g, ""), `tty-${i}\n`, `command ${i}`);
      assert.equal(r.late, 0, `command ${i}: output after the exit`);
      assert.equal(r.exit.code, 0);
    }
  });

  it("still ends a command whose background child keeps its output open", async () => {
    const t = performance.now();
    const r = await run("sleep 30 & echo parent");
    leftBehind.push(r.exit.pid);
    assert.equal(r.out[1], "parent\n");
    assert.equal(r.exit.code, 0);
    // The exit is not held for the child's 30 s (a few read delays at most).
    assert.ok(performance.now() - t < 10_000, `took ${Math.round(performance.now() - t)} ms`);
  });
});
