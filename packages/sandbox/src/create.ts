import { stat } from "node:fs/promises";
import { BwrapSandbox, type BwrapSandboxOptions } from "./bwrap.js";
import { LocalSandbox } from "./local.js";
import type { Sandbox, SandboxOptions } from "./types.js";

/** Creates a sandbox session of the chosen kind (docker's client and the E2B SDK load only when used). */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  const s = await stat(options.workspace).catch(() => undefined);
  if (!s?.isDirectory()) throw new Error(`sandbox workspace is not a directory: ${options.workspace}`);
  const common: BwrapSandboxOptions = {
    workspace: options.workspace,
    ...(options.env ? { env: options.env } : {}),
    ...(options.id ? { id: options.id } : {}),
    ...(options.network ? { network: options.network } : {}),
    ...(options.proxySocket ? { proxySocket: options.proxySocket } : {}),
    ...(options.proxyEnv ? { proxyEnv: options.proxyEnv } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.protectedPaths ? { protectedPaths: options.protectedPaths } : {}),
    ...(options.workspaceQuotaBytes !== undefined
      ? { workspaceQuotaBytes: options.workspaceQuotaBytes }
      : {}),
    ...(options.account ? { account: options.account } : {}),
    ...(options.programs ? { programs: options.programs } : {}),
  };
  switch (options.kind) {
    case "local":
      return new LocalSandbox({ workspace: options.workspace, ...(options.env ? { env: options.env } : {}) });
    case "bwrap":
      return BwrapSandbox.create({
        ...common,
        ...(options.writableRoot ? { writableRoot: true } : {}),
        ...(options.rootfs ? { rootfs: options.rootfs } : {}),
      });
    case "docker": {
      const { DockerSandbox, checkDocker } = await import("./docker.js");
      const ok = await checkDocker();
      if (!ok.ok) throw new Error(ok.reason);
      return DockerSandbox.create({
        ...common,
        ...(options.image ? { image: options.image } : {}),
        ...(options.runtime ? { runtime: options.runtime } : {}),
      });
    }
    case "e2b": {
      const { E2BSandbox } = await import("./e2b.js");
      return E2BSandbox.create({
        workspace: options.workspace,
        ...(options.id ? { id: options.id } : {}),
        ...(options.env ? { env: options.env } : {}),
        ...(options.network ? { network: options.network } : {}),
        ...(options.protectedPaths ? { protectedPaths: options.protectedPaths } : {}),
        ...(options.e2b ? { e2b: options.e2b } : {}),
      });
    }
    default:
      throw new Error(`unknown sandbox backend: ${String((options as { kind: unknown }).kind)}`);
  }
}
