// `hands trust [DIR]`, `hands trust --list`, `hands untrust [DIR]`: the folders whose .hands/
// settings apply in full (see trust.ts for what applies otherwise).

import { readTrustStore, trustFolder, trustStorePath, untrustFolder } from "@hands/sdk/root";
import { UsageError } from "./args.js";

export const TRUST_HELP = `Usage: hands trust [DIR]     trust DIR (default: the current folder): its .hands/ settings apply in full
       hands trust --list    the trusted folders
       hands untrust [DIR]   forget DIR

A folder that is not trusted may only make runs stricter: its .hands/config.json cannot set
baseUrl, apiKey, another provider, mcpServers, sandbox "local", a laxer approval mode or memory
embeddings/lifecycle, and .hands/policy.json "allow" rules are ignored. Trust is per folder
(not its subfolders), by real path: a moved, renamed or replaced folder must be trusted again.`;

export function runTrustCommand(name: "trust" | "untrust", argv: string[], out: (s: string) => void): number {
  if (argv.includes("-h") || argv.includes("--help")) {
    out(`${TRUST_HELP}\n`);
    return 0;
  }
  const list = argv.includes("--list");
  const dirs = argv.filter((a) => a !== "--list");
  if (dirs.some((d) => d.startsWith("-")))
    throw new UsageError(`unknown option ${dirs.find((d) => d.startsWith("-"))}\n\n${TRUST_HELP}`);
  if (dirs.length > 1 || (list && (name === "untrust" || dirs.length > 0)))
    throw new UsageError(`too many arguments\n\n${TRUST_HELP}`);
  if (list) {
    const store = readTrustStore();
    if (store.unsafe) throw new UsageError(`trusted folders not read: ${store.unsafe}`);
    out(
      store.folders.length
        ? `${store.folders.map((f) => `${f.path}  (since ${f.trustedAt.slice(0, 10)})`).join("\n")}\n`
        : `No trusted folders (${trustStorePath()}).\n`,
    );
    return 0;
  }
  const dir = dirs[0] ?? process.cwd();
  if (name === "trust") {
    const path = trustFolder(dir);
    out(`Trusted ${path}: its .hands/ settings now apply in full (hands untrust to undo).\n`);
    return 0;
  }
  const forgotten = untrustFolder(dir);
  out(forgotten ? `No longer trusted: ${forgotten}\n` : `Not a trusted folder: ${dir}\n`);
  return 0;
}
