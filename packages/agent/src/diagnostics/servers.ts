// Which language server reads which files, and how it is started: typescript-language-server
// (tsserver of the workspace's own `typescript` when it has one, else the one Hands ships) for
// TypeScript and JavaScript, pyright for Python. Both are npm packages Hands depends on; in an
// isolating sandbox their folders (and node, when it is not under /usr) are mounted read-only
// at fixed paths, so the server runs in there with the sandbox's limits.
import { createRequire } from "node:module";
import { basename, dirname, extname, join } from "node:path";

export type ServerId = "typescript" | "pyright";

export interface ServerSpec {
  id: ServerId;
  /** The server's name in messages. */
  label: string;
  /** npm packages it needs (the first holds the entry point). */
  packages: string[];
  /** Entry point relative to the first package's folder. */
  entry: string;
  args: string[];
  /** How long a warm server's edit waits for its answer by default (DiagnosticsOptions.waitMs). */
  waitMs: number;
  /** Initialization options, given where the packages are as the server sees them. */
  initializationOptions: (packageDir: (name: string) => string) => unknown;
}

const EXTENSIONS: Record<string, { server: ServerId; languageId: string }> = {
  ".ts": { server: "typescript", languageId: "typescript" },
  ".mts": { server: "typescript", languageId: "typescript" },
  ".cts": { server: "typescript", languageId: "typescript" },
  ".tsx": { server: "typescript", languageId: "typescriptreact" },
  ".js": { server: "typescript", languageId: "javascript" },
  ".mjs": { server: "typescript", languageId: "javascript" },
  ".cjs": { server: "typescript", languageId: "javascript" },
  ".jsx": { server: "typescript", languageId: "javascriptreact" },
  ".py": { server: "pyright", languageId: "python" },
  ".pyi": { server: "pyright", languageId: "python" },
};

/** The server and LSP language id of a file, or undefined when no server reads it. */
export function languageOf(path: string): { server: ServerId; languageId: string } | undefined {
  if (basename(path).endsWith(".d.ts")) return EXTENSIONS[".ts"];
  return EXTENSIONS[extname(path).toLowerCase()];
}

export const SERVERS: Record<ServerId, ServerSpec> = {
  typescript: {
    id: "typescript",
    label: "typescript-language-server",
    packages: ["typescript-language-server", "typescript"],
    entry: "lib/cli.mjs",
    args: ["--stdio"],
    waitMs: 1500,
    // The workspace's node_modules/typescript wins (the server looks there first); this is the fallback.
    initializationOptions: (dir) => ({
      tsserver: { fallbackPath: join(dir("typescript"), "lib", "tsserver.js") },
      preferences: { includeCompletionsForModuleExports: false },
    }),
  },
  pyright: {
    id: "pyright",
    label: "pyright",
    packages: ["pyright"],
    entry: "langserver.index.js",
    args: ["--stdio"],
    // Pyright's answer to a pull is its analysis-complete signal, and there is no earlier one:
    // it checks a pulled file on its one thread, so the work-done progress it reports for that
    // check ("1 file to analyze", begin → end) is written only once the check is over, with the
    // answer (seen on the wire: bench/README.md, "Eyes"). The wait is therefore for the answer itself,
    // bounded: a warm check of a 2–30 KB module takes 0.2–0.4 s at load 3 and over 1.5 s at
    // loads past 10 (bench/diagnostics.mjs), so 1.5 s left most of them pending.
    waitMs: 5000,
    initializationOptions: () => ({}),
  },
};

/** Host folder of an installed package, or undefined when it is not installed. */
export function packageFolder(name: string): string | undefined {
  try {
    return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/** Where the packages are mounted in an isolating sandbox. */
export const SANDBOX_PACKAGES_DIR = "/run/hands/lsp";
const SYSTEM_PREFIXES = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"];

export interface LaunchPlan {
  argv: string[];
  readOnlyBinds: Array<{ host: string; path: string }>;
  initializationOptions: unknown;
}

/** Where an isolating sandbox sees the packages, and whether it has the host's /usr (bwrap does). */
export interface Placement {
  dir: string;
  sharesHostSystem: boolean;
}

/**
 * How to start `spec`: on the host's paths (`isolated` false) or through read-only mounts (or
 * copies, in docker) at `placement.dir`. Throws a clear error when a package is not installed.
 */
export function launchPlan(
  spec: ServerSpec,
  isolated: boolean,
  findPackage = packageFolder,
  placement: Placement = { dir: SANDBOX_PACKAGES_DIR, sharesHostSystem: true },
): LaunchPlan {
  const hostDirs = new Map<string, string>();
  for (const name of spec.packages) {
    const dir = findPackage(name);
    if (!dir) throw new Error(`${name} is not installed (it comes with Hands: reinstall it)`);
    hostDirs.set(name, dir);
  }
  const binds: LaunchPlan["readOnlyBinds"] = [];
  const seen = (name: string): string => {
    const host = hostDirs.get(name) as string;
    if (!isolated) return host;
    const path = `${placement.dir}/${name}`;
    if (!binds.some((b) => b.path === path)) binds.push({ host, path });
    return path;
  };
  let node = process.execPath;
  if (isolated && (!placement.sharesHostSystem || !SYSTEM_PREFIXES.some((p) => node.startsWith(p)))) {
    binds.push({ host: node, path: `${placement.dir}/node` });
    node = `${placement.dir}/node`;
  }
  const main = join(seen(spec.packages[0] as string), spec.entry);
  for (const name of spec.packages.slice(1)) seen(name);
  return {
    argv: [node, main, ...spec.args],
    readOnlyBinds: binds,
    initializationOptions: spec.initializationOptions(seen),
  };
}
