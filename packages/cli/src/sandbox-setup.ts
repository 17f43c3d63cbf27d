// Turns the sandbox settings (--sandbox, --network, --allow-domain) into a factory for the
// agent's session, starting the allow-list proxy when asked and saying clearly when the
// chosen backend does not isolate.
import { join } from "node:path";
import {
  defaultSandboxKind,
  parseAllowRules,
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
  /** Resolved on first read ("auto" probes bubblewrap). */
  readonly kind: SandboxKind;
  create: () => Promise<Sandbox>;
  close: () => Promise<void>;
}

/**
 * The backend for a --sandbox value, saying so when it does not isolate. "auto" probes
 * bubblewrap (a process spawn), so callers resolve it only when the answer is needed.
 */
export function resolveSandboxKind(kind: string, err: (s: string) => void): SandboxKind {
  if (kind === "auto") {
    const d = defaultSandboxKind();
    if (d.warning) err(`${d.warning}\n`);
    return d.kind;
  }
  if (kind === "local") {
    err('warning: sandbox "local" does not isolate commands: they run as you, on your files and network\n');
  }
  return kind as SandboxKind;
}

export async function prepareSandbox(
  choice: SandboxChoice,
  err: (s: string) => void,
): Promise<PreparedSandbox> {
  if (choice.network && choice.network !== "host" && choice.network !== "none")
    throw new UsageError(`--network must be "host" or "none", got "${choice.network}"`);
  if (choice.network === "host" && choice.allowDomain?.length)
    throw new UsageError("--network host and --allow-domain exclude each other");
  // A bad rule is a usage error now, not a failure at the first command.
  try {
    if (choice.allowDomain?.length) parseAllowRules(choice.allowDomain);
  } catch (e) {
    throw new UsageError(`--allow-domain: ${(e as Error).message}`);
  }
  const auditPath = join(dataDir(), "sandbox-audit.jsonl");
  let resolved: SandboxKind | undefined;
  const kind = (): SandboxKind => {
    resolved ??= resolveSandboxKind(choice.kind, err);
    return resolved;
  };
  // A network restriction must be checked against the backend before the run starts; without
  // one, "auto" is resolved on the first command, so a task that runs none never probes.
  if (choice.kind !== "auto" || choice.network === "none" || choice.allowDomain?.length) {
    if (kind() === "local" && (choice.network === "none" || choice.allowDomain?.length))
      throw new UsageError("the local sandbox cannot restrict the network; use --sandbox bwrap or docker");
  }
  let proxy: Awaited<ReturnType<typeof startAllowListProxy>> | undefined;
  let manager: SessionManager | undefined;
  return {
    get kind() {
      return kind();
    },
    create: async () => {
      const k = kind();
      // The proxy and the manager write the audit log (data dir, sandbox-audit.jsonl).
      if (choice.allowDomain?.length && !proxy)
        proxy = await startAllowListProxy({ allow: choice.allowDomain, auditPath });
      manager ??= new SessionManager({ auditPath });
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
