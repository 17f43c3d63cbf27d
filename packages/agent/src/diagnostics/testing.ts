// What the diagnostics tests share: which sandboxes this machine has (a missing one fails the
// suite unless HANDS_SANDBOX_SKIP names it), a tool context, and writing a workspace's files.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkBwrap, checkDocker, imageExists, imageTag, type Sandbox } from "@hands/sandbox";
import type { ToolContext } from "../tools/types.js";
import type { Diagnostics } from "./service.js";

export function bwrapOrSkip(): string | undefined {
  const skip = (process.env["HANDS_SANDBOX_SKIP"] ?? "").split(",").includes("bwrap");
  if (skip) return "HANDS_SANDBOX_SKIP lists bwrap";
  const c = checkBwrap();
  if (!c.ok) throw new Error(`bwrap unavailable: ${c.reason} (run scripts/test-env.sh as root)`);
  return undefined;
}

/** Why docker cannot be used here (a failure unless HANDS_SANDBOX_SKIP lists docker). */
export async function dockerOrSkip(): Promise<string | undefined> {
  if ((process.env["HANDS_SANDBOX_SKIP"] ?? "").split(",").includes("docker"))
    return "HANDS_SANDBOX_SKIP lists docker";
  const c = await checkDocker();
  if (!c.ok) throw new Error(`docker unavailable: ${c.reason} (run scripts/test-env.sh as root)`);
  if (!(await imageExists(imageTag())))
    throw new Error(`docker image ${imageTag()} missing (scripts/test-env.sh)`);
  return undefined;
}

export function context(workspace: string, diagnostics: Diagnostics, sandbox: Sandbox): ToolContext {
  return {
    workspace,
    readRoots: [],
    sandbox: async () => sandbox,
    signal: new AbortController().signal,
    diagnostics,
  };
}

export function write(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}
