import { stat } from "node:fs/promises";
import { LocalSandbox } from "./local.js";
import type { Sandbox, SandboxOptions } from "./types.js";

/** Creates a sandbox. Only the `local` backend exists for now (it does not isolate). */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  switch (options.kind) {
    case "local": {
      const s = await stat(options.workspace).catch(() => undefined);
      if (!s?.isDirectory()) throw new Error(`sandbox workspace is not a directory: ${options.workspace}`);
      return new LocalSandbox({ workspace: options.workspace, ...(options.env ? { env: options.env } : {}) });
    }
    case "bwrap":
    case "docker":
      throw new Error(
        `sandbox backend "${options.kind}" is not available yet; use "local" (which does not isolate)`,
      );
    default:
      throw new Error(`unknown sandbox backend: ${String((options as { kind: unknown }).kind)}`);
  }
}
