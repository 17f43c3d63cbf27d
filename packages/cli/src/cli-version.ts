import { readFileSync } from "node:fs";

/**
 * The CLI package's version. Resolved from this module's own place, which is one folder below
 * the package both in dist/ and in the bundle (a chunk of bundle/), so front ends in subfolders
 * import this instead of climbing a number of folders that only holds in one of the two.
 */
export function cliVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    return pkg.version;
  } catch {
    return "0.0.0";
  }
}
