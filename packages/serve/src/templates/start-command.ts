// A template's start command (E2B's setStartCmd): started in the background when a sandbox of the
// template starts, as the sandbox's user; with a ready command, the sandbox is handed out once
// that command exits 0 (polled, within a bound), as E2B's templates wait for readiness.
import type { AgentEvent } from "../agent/client.js";
import { E2B_HOME, E2B_USER, type SandboxRuntime } from "../runtime.js";

const READY_TIMEOUT_MS = 60_000;
const POLL_MS = 250;

function run(rt: SandboxRuntime, cmd: string, onExit?: (code: number) => void): Promise<unknown> {
  return rt.startProcess(
    { cmd: "/bin/bash", args: ["-l", "-c", cmd], envs: {}, cwd: E2B_HOME },
    { stdin: false, user: E2B_USER, tag: "start-cmd" },
    (ev: AgentEvent) => {
      if (ev.ev === "exit") onExit?.(ev.code);
    },
  );
}

export async function runStartCommand(
  rt: SandboxRuntime,
  spec: { startCmd?: string; readyCmd?: string },
): Promise<void> {
  if (!spec.startCmd) return;
  await run(rt, spec.startCmd);
  if (!spec.readyCmd) return;
  const until = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < until) {
    const code = await new Promise<number>((resolve) => {
      const t = setTimeout(() => resolve(-1), 10_000);
      run(rt, spec.readyCmd as string, (c) => {
        clearTimeout(t);
        resolve(c);
      }).catch(() => {
        clearTimeout(t);
        resolve(-1);
      });
    });
    if (code === 0) return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`the template's ready command did not succeed within ${READY_TIMEOUT_MS / 1000} s`);
}
