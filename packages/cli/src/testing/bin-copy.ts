// A private copy of the `hands` bin and its bundle, for tests of the V8 code cache it keeps.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface BinCopy {
  root: string;
  bin: string;
  /** Its code cache folder: $XDG_DATA_HOME/hands/v8-cache. */
  cache: string;
  /** Its XDG_CACHE_HOME (the code cache is not kept there). */
  userCache: string;
  /** Its XDG_DATA_HOME (the private data folder the code cache and its key are kept in). */
  userData: string;
}

/** A copy with no code cache yet, inside @hands/cli so packages resolve. */
export function copyOfBin(): BinCopy {
  const root = mkdtempSync(join(CLI_ROOT, ".test-bin-"));
  cpSync(join(CLI_ROOT, "bin"), join(root, "bin"), { recursive: true });
  cpSync(join(CLI_ROOT, "bundle"), join(root, "bundle"), {
    recursive: true,
    filter: (f) => !f.includes(".v8-cache"),
  });
  return {
    root,
    bin: join(root, "bin", "hands.js"),
    cache: join(root, "xdg-data", "hands", "v8-cache"),
    userCache: join(root, "xdg-cache"),
    userData: join(root, "xdg-data"),
  };
}

/** The one build folder under a code cache folder. */
export function buildFolder(cache: string): string {
  const builds = readdirSync(cache);
  assert.equal(builds.length, 1, `one build's folder: ${builds}`);
  assert.match(builds[0]!, /^[0-9a-f]{16}$/);
  return join(cache, builds[0]!);
}
