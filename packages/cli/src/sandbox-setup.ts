// Turns the sandbox settings (--sandbox, --network, --allow-domain) into a factory for the
// agent's session, starting the allow-list proxy when asked and saying clearly when the
// chosen backend does not isolate.
import { join } from "node:path";
import {
  defaultSandboxKind,
  type Sandbox,
  type SandboxKind,
  SessionManager,
  startAllowListProxy,
} from "@hands/sandbox";
import { UsageError } from "./args.js";
import { dataDir } from "./paths.js";

export interface SandboxChoice {
  kind: string;
  workspace: string;
  network?: string | undefined;
  allowDomain?: string[] | undefined;
}

export interface PreparedSandbox {
  kind: SandboxKind;
  create: () => Promise<Sandbox>;
  close: () => Promise<void>;
}

export async function prepareSandbox(
  choice: SandboxChoice,
  err: (s: string) => void,
): Promise<PreparedSandbox> {
  let kind = choice.kind as SandboxKind | "auto";
  if (kind === "auto") {
    const d = defaultSandboxKind();
    kind = d.kind;
    if (d.warning) err(`${d.warning}\n`);
  } else if (kind === "local") {
    err('warning: sandbox "local" does not isolate commands: they run as you, on your files and network\n');
  }
  if (choice.network && choice.network !== "host" && choice.network !== "none")
    throw new UsageError(`--network must be "host" or "none", got "${choice.network}"`);
  if (choice.network === "host" && choice.allowDomain?.length)
    throw new UsageError("--network host and --allow-domain exclude each other");
  if (kind === "local" && (choice.network === "none" || choice.allowDomain?.length))
    throw new UsageError("the local sandbox cannot restrict the network; use --sandbox bwrap or docker");
  const k = kind;
  let proxy: Awaited<ReturnType<typeof startAllowListProxy>> | undefined;
  let manager: SessionManager | undefined;
  return {
    kind: k,
    create: async () => {
      if (choice.allowDomain?.length && !proxy)
        proxy = await startAllowListProxy({ allow: choice.allowDomain });
      // The manager writes the audit log (data dir, sandbox-audit.jsonl) and reaps on a timer.
      manager ??= new SessionManager({ auditPath: join(dataDir(), "sandbox-audit.jsonl") });
      return manager.create({
        kind: k,
        workspace: choice.workspace,
        ...(k === "local" ? {} : { network: proxy ? "proxy" : choice.network === "host" ? "host" : "none" }),
        ...(proxy ? { proxySocket: proxy.socketPath } : {}),
      });
    },
    close: async () => {
      await manager?.close();
      await proxy?.close();
    },
  };
}
