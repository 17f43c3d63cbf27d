// Turns the sandbox settings (--sandbox, --network, --allow-domain) into a factory for the
// agent's session, starting the allow-list proxy when asked and saying clearly when the
// chosen backend does not isolate. The backends themselves (and the proxy, the E2B client) are
// loaded when the first sandbox is made, not at start-up.
import { mkdirSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import type {
  Diagnosis,
  ExecResult,
  PackageIndex,
  SessionManager,
  startAllowListProxy,
} from "@hands/sandbox";
import {
  DEFAULT_PROTECTED_PATHS,
  defaultSandboxKind,
  type Sandbox,
  type SandboxKind,
} from "@hands/sandbox/base";
import { SettingsError } from "./errors.js";
import { codeCacheDir, dataDir, userConfigPath } from "./paths.js";

export interface SandboxChoice {
  kind: string;
  workspace: string;
  network?: string | undefined;
  allowDomain?: string[] | undefined;
  /** Where Hands' folders are (to protect them when the workspace holds them). */
  env?: NodeJS.ProcessEnv | undefined;
  /** kind "e2b": the template (else HANDS_E2B_TEMPLATE, else "base"). */
  e2bTemplate?: string | undefined;
  /** docker/bwrap: a local template's image or root filesystem (templatesDir()). */
  template?: string | undefined;
}

export interface PreparedSandbox {
  /** Resolved on first read ("auto" probes bubblewrap). */
  readonly kind: SandboxKind;
  create: () => Promise<Sandbox>;
  /** Why a failed command failed, from this sandbox's facts (network, limits, package index). */
  diagnose: (sandbox: Sandbox, result: ExecResult) => Promise<Diagnosis | undefined>;
  close: () => Promise<void>;
}

/**
 * Where local templates' root filesystems and names live. As root, bwrap sandboxes run as an
 * unprivileged host user (host-user.ts) who cannot enter the private data folder: then a
 * world-readable /var/lib/hands/templates (a root filesystem holds nothing secret).
 */
export function templatesDir(env: NodeJS.ProcessEnv = process.env): string {
  const set = env["HANDS_TEMPLATES_DIR"];
  if (set) return set;
  if (process.getuid?.() === 0) return "/var/lib/hands/templates";
  return join(dataDir(env), "templates");
}

/** A local template as sandbox options: its image (docker, gVisor) or root filesystem (bwrap). */
async function localTemplate(
  name: string,
  kind: SandboxKind,
  env: NodeJS.ProcessEnv,
): Promise<{ image?: string; rootfs?: string; start?: string }> {
  const { findTemplate } = await import("@hands/sandbox/backends");
  let t: ReturnType<typeof findTemplate>;
  try {
    t = findTemplate(templatesDir(env), name);
  } catch (e) {
    throw new SettingsError((e as Error).message);
  }
  const start = t.recipe.start ? { start: t.recipe.start } : {};
  if (kind === "docker") return { image: t.image, ...start };
  if (kind === "bwrap") return { rootfs: t.rootfs, ...start };
  throw new SettingsError(`--template works with the docker and bwrap sandboxes, not ${kind}`);
}

/** Where `hands sandbox build-image` keeps the package index the diagnosis reads. */
export function packageIndexDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(dataDir(env), "package-index");
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

/**
 * What a sandboxed command may not change: the project's settings and instructions, and Hands'
 * own folders when the workspace holds them (a workspace at $HOME): the user config, policy and
 * trusted-folders list would otherwise apply to every other workspace, and the data folder holds
 * the sessions and the memory later runs trust, and the folder of the bin's code cache and its
 * key (planted code would run on the host at the next start). They are made first, so each has
 * a mount.
 */
export function protectedPathsFor(workspace: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const paths = [...DEFAULT_PROTECTED_PATHS];
  const keyDir = codeCacheDir(env);
  for (const dir of [dirname(userConfigPath(env)), dataDir(env), ...(keyDir ? [keyDir] : [])]) {
    const rel = relative(workspace, resolveMade(dir));
    if (rel && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel) && !paths.includes(rel))
      paths.push(rel);
  }
  return paths;
}

/** The real path of one of Hands' folders, made (private) if it does not exist yet. */
function resolveMade(dir: string): string {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

export async function prepareSandbox(
  choice: SandboxChoice,
  err: (s: string) => void,
): Promise<PreparedSandbox> {
  if (choice.network && choice.network !== "host" && choice.network !== "none")
    throw new SettingsError(`--network must be "host" or "none", got "${choice.network}"`);
  if (choice.network === "host" && choice.allowDomain?.length)
    throw new SettingsError("--network host and --allow-domain exclude each other");
  // A bad rule is a usage error now, not a failure at the first command.
  try {
    if (choice.allowDomain?.length)
      (await import("@hands/sandbox/backends")).parseAllowRules(choice.allowDomain);
  } catch (e) {
    throw new SettingsError(`--allow-domain: ${(e as Error).message}`);
  }
  const env = choice.env ?? process.env;
  if (choice.kind === "e2b") {
    if (choice.allowDomain?.length)
      throw new SettingsError(
        "--allow-domain is not available with --sandbox e2b (only --network host or none)",
      );
    // No key is a usage error now, not a failure at the first command.
    try {
      (await import("@hands/sandbox/backends")).resolveE2BConnection({}, env);
    } catch (e) {
      throw new SettingsError((e as Error).message);
    }
  }
  const auditPath = join(dataDir(env), "sandbox-audit.jsonl");
  let resolved: SandboxKind | undefined;
  const kind = (): SandboxKind => {
    resolved ??= resolveSandboxKind(choice.kind, err);
    return resolved;
  };
  // A network restriction must be checked against the backend before the run starts; without
  // one, "auto" is resolved on the first command, so a task that runs none never probes.
  if (choice.kind !== "auto" || choice.network === "none" || choice.allowDomain?.length) {
    if (kind() === "local" && (choice.network === "none" || choice.allowDomain?.length))
      throw new SettingsError("the local sandbox cannot restrict the network; use --sandbox bwrap or docker");
  }
  let proxy: Awaited<ReturnType<typeof startAllowListProxy>> | undefined;
  let manager: SessionManager | undefined;
  let index: PackageIndex | undefined | null;
  // A sandbox may still be on its way when the session closes (a language server's start after
  // a read, in the background): close waits for it and destroys it, and none is made after.
  const pending = new Set<Promise<Sandbox>>();
  let closed = false;
  const make = async (): Promise<Sandbox> => {
    const k = kind();
    const { SessionManager, startAllowListProxy, startTemplateCommand } = await import(
      "@hands/sandbox/backends"
    );
    if (closed) throw new Error("the session has ended");
    // The proxy and the manager write the audit log (data dir, sandbox-audit.jsonl).
    if (choice.allowDomain?.length && !proxy)
      proxy = await startAllowListProxy({ allow: choice.allowDomain, auditPath });
    manager ??= new SessionManager({ auditPath });
    const tpl = choice.template ? await localTemplate(choice.template, k, env) : undefined;
    const sb = await manager.create({
      kind: k,
      workspace: choice.workspace,
      protectedPaths: protectedPathsFor(choice.workspace, env),
      ...(k === "local" ? {} : { network: proxy ? "proxy" : choice.network === "host" ? "host" : "none" }),
      ...(proxy ? { proxySocket: proxy.socketPath } : {}),
      ...(k === "e2b" && choice.e2bTemplate ? { e2b: { template: choice.e2bTemplate } } : {}),
      ...(tpl
        ? { ...(tpl.image ? { image: tpl.image } : {}), ...(tpl.rootfs ? { rootfs: tpl.rootfs } : {}) }
        : {}),
    });
    if (tpl?.start) {
      await startTemplateCommand(sb, tpl.start).catch(async (e: unknown) => {
        await sb.destroy();
        throw e;
      });
    }
    return sb;
  };
  return {
    get kind() {
      return kind();
    },
    create: () => {
      if (closed) return Promise.reject(new Error("the session has ended"));
      const p = make();
      pending.add(p);
      void p.then(
        () => pending.delete(p),
        () => pending.delete(p),
      );
      return p;
    },
    diagnose: async (sandbox, result) => {
      const { DEFAULT_LIMITS, diagnoseFailure, loadPackageIndex, packageIndexFile } = await import(
        "@hands/sandbox/backends"
      );
      if (index === undefined) {
        try {
          index = loadPackageIndex(packageIndexFile(packageIndexDir(env))) ?? null;
        } catch {
          index = null; // not a Debian host: no suite to name
        }
      }
      const k = kind();
      return diagnoseFailure(sandbox, result, {
        ...(k === "local" || k === "e2b"
          ? {}
          : { network: proxy ? "proxy" : choice.network === "host" ? "host" : "none" }),
        ...(k === "local" || k === "e2b" ? {} : { limits: DEFAULT_LIMITS }),
        ...(index ? { index } : {}),
        indexHint: "hands sandbox build-image makes one",
      });
    },
    close: async () => {
      closed = true;
      await Promise.allSettled([...pending]);
      await manager?.close();
      await proxy?.close();
    },
  };
}
