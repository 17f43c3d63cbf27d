// Which Debian package provides a command or a shared library, from the suite's own Contents
// index (the file apt-file reads), fetched once from apt's mirror and cut down to the two kinds
// of path a failed command can miss: programs on the PATH and shared libraries. Run-time
// look-ups read only this local file: no network when a command fails.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import { debianSource } from "./image.js";

export interface PackageIndex {
  /** Packages that ship a program of this name in a PATH folder. */
  command(name: string): string[];
  /** Packages that ship a shared library of this file name (libX.so.N). */
  library(name: string): string[];
}

const BIN_DIR = /^(?:usr\/)?(?:s?bin|games)\/([^/]+)$/;
const LIB_FILE = /^(?:usr\/)?lib(?:32|64)?\/(?:[^/]+\/)*([^/]+\.so(?:\.[0-9.]+)?)$/;
/** Where the loader looks by default: lib/, usr/lib/ and their multiarch folder (others ship private copies). */
const LIB_DEFAULT_DIR = /^(?:usr\/)?lib(?:32|64)?\/(?:[a-z0-9_]+-linux-gnu[a-z0-9_]*\/)?[^/]+$/;

/** dpkg's name for this machine's architecture (amd64, arm64, …). */
export function debianArch(): string {
  const r = spawnSync("dpkg", ["--print-architecture"], { encoding: "utf8" });
  if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  return process.arch === "x64" ? "amd64" : process.arch === "arm64" ? "arm64" : process.arch;
}

export function packageIndexFile(dir: string, suite = debianSource().suite, arch = debianArch()): string {
  return join(dir, `packages-${suite}-${arch}.tsv`);
}

/**
 * Fetches `dists/<suite>/main/Contents-<arch>.gz` from apt's mirror and writes the index into
 * `dir` (0600, replaced whole by a rename). Returns its path; a present index is kept unless `force`.
 */
export async function buildPackageIndex(
  dir: string,
  o: { force?: boolean; log?: (s: string) => void; signal?: AbortSignal } = {},
): Promise<string> {
  const { suite, mirror } = debianSource();
  const arch = debianArch();
  const file = packageIndexFile(dir, suite, arch);
  if (!o.force && existsSync(file)) return file;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const url = `${mirror}/dists/${suite}/main/Contents-${arch}.gz`;
  o.log?.(`package index: ${url}\n`);
  const lines: string[] = [];
  const body = await fetchStream(url, o.signal);
  const rl = createInterface({ input: body.pipe(createGunzip()), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of rl) {
    // "path<spaces>section/pkg[,section/pkg…]"; the path may itself hold spaces.
    const m = /^(.*\S)\s+(\S+)$/.exec(line);
    if (!m?.[1] || !m[2]) continue;
    const pkgs = m[2]
      .split(",")
      .map((p) => p.slice(p.lastIndexOf("/") + 1))
      .join(",");
    const bin = BIN_DIR.exec(m[1]);
    if (bin?.[1]) lines.push(`c\t${bin[1]}\t${pkgs}`);
    const lib = LIB_FILE.exec(m[1]);
    if (lib?.[1]) lines.push(`${LIB_DEFAULT_DIR.test(m[1]) ? "l" : "L"}\t${lib[1]}\t${pkgs}`);
  }
  if (lines.length < 1000) throw new Error(`${url}: only ${lines.length} entries, not a Contents index`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${lines.join("\n")}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

async function fetchStream(url: string, signal?: AbortSignal, hops = 0): Promise<NodeJS.ReadableStream> {
  // Loaded here, not at the top: this module rides in the backends' chunk, and node:https loaded
  // at start-up would read NODE_EXTRA_CA_CERTS in every run (packages/cli/bin/extra-ca.js).
  const { get } = url.startsWith("https:") ? await import("node:https") : await import("node:http");
  return new Promise((resolve, reject) => {
    const req = get(url, { ...(signal ? { signal } : {}) }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location && hops < 5) {
        res.resume();
        resolve(fetchStream(new URL(res.headers.location, url).toString(), signal, hops + 1));
      } else if (status !== 200) {
        res.resume();
        reject(new Error(`${url}: HTTP ${status}`));
      } else resolve(res);
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`${url}: no answer in 60 s`)));
    req.on("error", reject);
  });
}

/** The index at `file`, read when first asked (a few MB; only a failed command asks). */
export function loadPackageIndex(file: string): PackageIndex | undefined {
  if (!existsSync(file)) return undefined;
  // c: programs; l: libraries where the loader looks; L: private copies elsewhere.
  let maps: Record<"c" | "l" | "L", Map<string, string[]>> | undefined;
  const load = () => {
    if (maps) return maps;
    maps = { c: new Map(), l: new Map(), L: new Map() };
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const [kind, name, pkgs] = line.split("\t");
      if (!name || !pkgs || (kind !== "c" && kind !== "l" && kind !== "L")) continue;
      const m = maps[kind];
      m.set(name, [...new Set([...(m.get(name) ?? []), ...pkgs.split(",")])]);
    }
    return maps;
  };
  return {
    command: (name) => load().c.get(name) ?? [],
    // The packages that put it where the loader looks; only when none does, those with a private copy.
    library: (name) => {
      const m = load();
      return m.l.get(name) ?? m.L.get(name) ?? [];
    },
  };
}
