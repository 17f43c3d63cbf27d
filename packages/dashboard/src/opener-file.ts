// The browser is given a file, not the link: a command line is readable by every user of the
// machine (/proc/PID/cmdline of xdg-open and the browser), a file in the private data folder
// (0700, the file 0600) is not. The file moves on to the one-time link; it is removed once the
// link has been used and when the dashboard stops.
import { chmodSync, lstatSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { movingOnPage } from "./auth.js";

export interface OpenerFile {
  path: string;
  /** The file:// URL to give the browser. */
  url: string;
  remove(): void;
}

/** Writes `<dataDir>/dashboard/open-<port>.html`, which opens `link`. */
export function writeOpenerFile(dataDir: string, port: number, link: string): OpenerFile {
  const dir = join(dataDir, "dashboard");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory() || (typeof process.getuid === "function" && st.uid !== process.getuid()))
    throw new Error(`${dir} is not a folder of this user's`);
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  const path = join(dir, `open-${port}.html`);
  // Never through whatever is at that name (a symlink): removed, then made new (O_EXCL).
  rmSync(path, { force: true });
  writeFileSync(path, movingOnPage(link, "Open the Hands dashboard"), { flag: "wx", mode: 0o600 });
  return { path, url: pathToFileURL(path).href, remove: () => rmSync(path, { force: true }) };
}
