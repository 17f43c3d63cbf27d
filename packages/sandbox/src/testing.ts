// Test support: the backends the shared contract and security suites run against. A backend
// that is not available here fails its tests with the reason, unless the person running them
// said so explicitly with HANDS_SANDBOX_SKIP=bwrap,docker (then they are reported skipped).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox } from "./create.js";
import { checkBwrap } from "./sandbox-kind.js";
import type { Sandbox, SandboxKind, SandboxOptions } from "./types.js";

export const TEST_LIMITS = { memoryBytes: 256 * 1024 * 1024, pids: 128, cpus: 1 };

export function explicitlySkipped(kind: SandboxKind): string | undefined {
  const list = (process.env["HANDS_SANDBOX_SKIP"] ?? "").split(",").map((s) => s.trim());
  return list.includes(kind) ? `HANDS_SANDBOX_SKIP lists ${kind}` : undefined;
}

/** Throws a clear reason when `kind` cannot run here. */
export async function requireBackend(kind: SandboxKind): Promise<void> {
  if (kind === "bwrap") {
    const c = checkBwrap();
    if (!c.ok) throw new Error(`bwrap backend unavailable: ${c.reason} (run scripts/test-env.sh as root)`);
  }
  if (kind === "docker") {
    const { checkDocker } = await import("./docker.js");
    const c = await checkDocker();
    if (!c.ok) throw new Error(`docker backend unavailable: ${c.reason} (run scripts/test-env.sh as root)`);
    const { imageExists, imageTag } = await import("./image.js");
    if (!(await imageExists(imageTag())))
      throw new Error(`docker backend unavailable: image ${imageTag()} missing (run scripts/test-env.sh)`);
  }
}

export async function tempWorkspace(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "hands-test-ws-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function makeSandbox(
  kind: SandboxKind,
  workspace: string,
  extra: Partial<SandboxOptions> = {},
): Promise<Sandbox> {
  return createSandbox({ kind, workspace, limits: TEST_LIMITS, ...extra });
}
