// A ToolContext for tests: a fresh temp workspace (realpath'd) and a real LocalSandbox.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalSandbox } from "@hands/sandbox";
import type { ToolContext } from "./types.js";

export interface TestContext extends ToolContext {
  /** The same object, for `const { ctx, cleanup } = makeTestContext()`. */
  ctx: ToolContext;
  /** Aborts ctx.signal. */
  abort: () => void;
  /** Destroys the sandbox and, if makeTestContext created the workspace, deletes it. */
  cleanup: () => Promise<void>;
}

/**
 * Creates a test context. Without `workspace` a temp folder is created (and removed by
 * cleanup). Synchronous, so it works with or without `await`. The sandbox is created on
 * first use, as in the real agent.
 */
export function makeTestContext(options: { workspace?: string; readRoots?: string[] } = {}): TestContext {
  const owned = options.workspace === undefined;
  const workspace = realpathSync(options.workspace ?? mkdtempSync(join(tmpdir(), "hands-test-")));
  const controller = new AbortController();
  let sandbox: LocalSandbox | undefined;
  const t = {
    workspace,
    readRoots: (options.readRoots ?? []).map((p) => realpathSync(p)),
    signal: controller.signal,
    sandbox: async () => {
      sandbox ??= new LocalSandbox({ workspace });
      return sandbox;
    },
    abort: () => controller.abort(),
    cleanup: async () => {
      await sandbox?.destroy();
      if (owned) rmSync(workspace, { recursive: true, force: true });
    },
  } as Omit<TestContext, "ctx"> as TestContext;
  t.ctx = t;
  return t;
}
