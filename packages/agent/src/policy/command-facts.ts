// Facts about one invocation that the built-in rules are written in: where the paths it
// deletes or writes reach, does it read from the network, does it run code it downloads, does
// it kill every process. Each reads the parsed words (shell-meaning.ts), never the spelling.

import { type Reach, reachOf } from "./path-reach.js";
import type { Effect } from "./programs.js";
import { type CommandMeaning, type Invocation, normalizePath, skipOptions } from "./shell-meaning.js";
import { UNKNOWN } from "./shell-parse.js";

/** Where an effect's path reaches, from the folder the invocation runs in. */
export function reachOfEffect(inv: Invocation, e: Effect, all: CommandMeaning): Reach {
  return reachOf(e.path, { cwd: inv.cwd, workspaces: all.workspaces });
}

/** The first effect of the kinds given whose path reaches one of `reaches`. */
export function effectReaching(
  inv: Invocation,
  all: CommandMeaning,
  kinds: Effect["kind"][],
  reaches: Reach[],
  recursive?: boolean,
): { effect: Effect; reach: Reach } | undefined {
  for (const effect of inv.effects) {
    if (!kinds.includes(effect.kind)) continue;
    if (recursive !== undefined && effect.recursive !== recursive) continue;
    const reach = reachOfEffect(inv, effect, all);
    if (reaches.includes(reach)) return { effect, reach };
  }
  return undefined;
}

const SYSTEM_DIRS =
  "bin|boot|dev|etc|home|lib|lib32|lib64|libx32|opt|proc|root|run|sbin|srv|sys|usr|var|snap|mnt|media";
const SWEEPING = new RegExp(`^(/|~|/\\*|~/\\*|/(${SYSTEM_DIRS})(/\\*)?)$`);

/** True when the path is the whole file system, the home folder, a system folder, or all in one. */
export function isSweepingPath(path: string): boolean {
  return !path.includes(UNKNOWN) && SWEEPING.test(normalizePath(path));
}

/** True when the path becomes sweeping if the variables in it are empty (`"$DIR/"` → `/`). */
export function sweepsIfEmpty(path: string): boolean {
  return path.includes(UNKNOWN) && SWEEPING.test(normalizePath(path.split(UNKNOWN).join("")));
}

/** The operands (not options) of an invocation; `--` ends the options. */
export function operands(inv: Invocation, withValue = ""): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < inv.args.length) {
    const next = skipOptions(inv.args, i, { short: withValue });
    if (next > i && inv.args[next - 1] === "--") {
      out.push(...inv.args.slice(next));
      return out;
    }
    if (next >= inv.args.length) break;
    out.push(inv.args[next]!);
    i = next + 1;
  }
  return out;
}

/** True when one of the options is given: a short letter (also inside -rf) or a long name. */
export function hasOption(inv: Invocation, letters: string, long: string[] = []): boolean {
  for (const a of inv.args) {
    if (a === "--") return false;
    if (a.startsWith("--")) {
      if (long.includes(a.slice(2).split("=")[0]!)) return true;
    } else if (/^-[a-zA-Z]+$/.test(a) && [...a.slice(1)].some((c) => letters.includes(c))) return true;
  }
  return false;
}

const BENIGN_DEVICES =
  /^\/dev\/(null|zero|full|random|urandom|stdin|stdout|stderr|tty|ptmx|fd\/|pts\/|shm\/|mqueue\/)/;

/** True for a device path that is not one of the harmless ones (/dev/null, /dev/stdout…). */
export function isDevicePath(path: string): boolean {
  const p = normalizePath(path);
  return p.startsWith("/dev/") && !BENIGN_DEVICES.test(p);
}

/** Programs that download. */
export const FETCHERS = new Set(["curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request"]);
/** Programs that read from a network peer (raw sockets, remote shells). */
const NETWORK = new Set([
  ...FETCHERS,
  "nc",
  "ncat",
  "netcat",
  "socat",
  "telnet",
  "openssl",
  "ssh",
  "ftp",
  "tftp",
  "lynx",
  "links",
  "w3m",
  "GET",
  "POST",
  "rsync",
  "scp",
]);

/** True when the invocation reads from the network: a downloader, a socket tool, `< /dev/tcp/…`. */
export function readsNetwork(inv: Invocation): boolean {
  if (NETWORK.has(inv.name)) return true;
  if (inv.redirects.some((r) => /^\/dev\/(tcp|udp)\//.test(normalizePath(r.target.value)))) return true;
  return inv.feeds.some(readsNetwork);
}

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "fish"]);
const INTERPRETERS = /^(python[0-9.]*|pypy[0-9.]*|perl|ruby|node|nodejs|php|lua[0-9.]*|pwsh|tclsh|deno|bun)$/;
/** Options that make an interpreter run code given on its command line or a module, not stdin. */
const CODE_OPTION: Record<string, RegExp> = {
  python: /^-[a-zA-Z]*[cm]/,
  perl: /^-[a-zA-Z]*[eE]/,
  ruby: /^-[a-zA-Z]*e/,
  node: /^(-[a-zA-Z]*[ep]|--eval|--print)/,
  php: /^-[a-zA-Z]*[rf]/,
};

/** True for a shell or a script interpreter. */
export function isInterpreter(name: string): boolean {
  return SHELLS.has(name) || INTERPRETERS.test(name) || name === "source" || name === ".";
}

/** True when the shell or interpreter takes its program from standard input. */
export function readsCodeFromStdin(inv: Invocation): boolean {
  if (!isInterpreter(inv.name) || inv.name === "source" || inv.name === ".") return false;
  const family = Object.keys(CODE_OPTION).find(
    (k) => inv.name.startsWith(k) || (k === "node" && inv.name === "nodejs"),
  );
  if (family && inv.args.some((a) => CODE_OPTION[family]!.test(a))) return false;
  if (SHELLS.has(inv.name) && hasOption(inv, "c")) return false;
  if (SHELLS.has(inv.name) && hasOption(inv, "s")) return true;
  const ops = operands(inv, SHELLS.has(inv.name) ? "oO" : "WX");
  return ops.length === 0 || ops[0] === "-";
}

/**
 * True when what reaches this invocation's standard input comes from the network: an earlier
 * stage of its pipeline reads it (`curl … | sh`, `cat < /dev/tcp/h/80 | sh`), or its own input does
 * (`sh < /dev/tcp/h/80`).
 */
export function downloadPipedIn(inv: Invocation, all: Invocation[]): boolean {
  if (
    inv.redirects.some(
      (r) => /^(<|<>)$/.test(r.op) && /^\/dev\/(tcp|udp)\//.test(normalizePath(r.target.value)),
    )
  )
    return true;
  const p = inv.pipeline;
  if (!p || p.stage === 0) return false;
  return all.some((o) => o.pipeline?.id === p.id && o.pipeline.stage < p.stage && readsNetwork(o));
}

/** True when a download feeds this invocation's words: `bash <(curl …)`, `sh -c "$(curl …)"`. */
export function downloadFedIn(inv: Invocation): boolean {
  return inv.feeds.some(readsNetwork);
}

/** Process names a pattern is tried on: one that matches them all kills every process. */
const SAMPLE_PROCESSES = ["systemd", "init", "bash", "sshd", "kthreadd", "node", "Xorg", "a", "zz9"];

function matchesEverything(pattern: string): boolean {
  if (pattern.includes(UNKNOWN)) return false;
  try {
    const re = new RegExp(pattern);
    return SAMPLE_PROCESSES.every((p) => re.test(p));
  } catch {
    return false;
  }
}

/** True for killall5, and pkill/killall whose pattern matches every name (or that pick by user only). */
export function killsEverything(inv: Invocation): boolean {
  if (inv.name === "killall5") return true;
  if (inv.name !== "pkill" && inv.name !== "killall" && inv.name !== "skill" && inv.name !== "slay")
    return false;
  const args = inv.args;
  const selectors = /^-(u|U|G|g|s|P|t|-user|-uid|-group|-session|-parent|-terminal)$/;
  let pattern: string | undefined;
  let selector = false;
  let regex = inv.name === "pkill";
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (selectors.test(a)) {
      selector = true;
      i++;
    } else if (/^-(s|-signal|n|-ns|F|-pidfile|o|y|-older-than|-younger-than|-context|-cgroup|-ns)$/.test(a))
      i++;
    else if (a === "-r" || a === "--regexp") regex = true;
    else if (a.startsWith("-")) continue;
    else if (pattern === undefined) pattern = a;
  }
  if (args.includes("-v") || args.includes("--inverse")) return true; // every process but the named
  if (pattern === undefined) return selector;
  return regex ? matchesEverything(pattern) : false;
}

/** True for `kill $(pgrep .)`, `kill $(ps -e -o pid=)`: the targets are every process. */
export function killsFedEverything(inv: Invocation): boolean {
  if (inv.name !== "kill") return false;
  return inv.feeds.some(
    (f) =>
      (f.name === "pgrep" && killsEverything({ ...f, name: "pkill" })) ||
      (f.name === "ps" && f.args.some((a) => /^(-[a-zA-Z]*[eA]|a?u?x|aux)$/.test(a))),
  );
}

const downloadedCache = new WeakMap<CommandMeaning, Set<string>>();

/** Paths the line writes from the network: `curl -o x.sh`, `wget URL`, `curl … > x.sh`, `curl … | tee x.sh`. */
function downloadedFiles(all: CommandMeaning): Set<string> {
  const cached = downloadedCache.get(all);
  if (cached) return cached;
  const out = new Set<string>();
  downloadedCache.set(all, out);
  const network = new Set(all.invocations.filter(readsNetwork).map((o) => o.pipeline?.id));
  const add = (p: string) => out.add(normalizePath(p).replace(/^(\.\/)+/, ""));
  for (const inv of all.invocations) {
    const fromNet =
      readsNetwork(inv) ||
      (inv.pipeline !== undefined &&
        network.has(inv.pipeline.id) &&
        all.invocations.some(
          (o) =>
            o.pipeline?.id === inv.pipeline!.id && o.pipeline.stage < inv.pipeline!.stage && readsNetwork(o),
        ));
    if (!fromNet) continue;
    for (const e of inv.effects) if (e.kind === "write") add(e.path);
    // wget URL and curl -O URL save under the URL's last name.
    if (
      inv.name === "wget" ||
      (inv.name === "curl" && inv.args.some((a) => /^-[a-zA-Z]*O$|^--remote-name$/.test(a)))
    )
      for (const a of inv.args)
        if (/^[a-z]+:\/\//.test(a)) add(a.replace(/[?#].*$/, "").replace(/.*\//, "") || "index.html");
  }
  return out;
}

/** True when the invocation runs a file the same line downloaded (`curl -o i.sh … && sh i.sh`). */
export function runsDownloadedFile(inv: Invocation, all: CommandMeaning): boolean {
  const files = downloadedFiles(all);
  if (files.size === 0) return false;
  const norm = (p: string) => normalizePath(p).replace(/^(\.\/)+/, "");
  if (files.has(norm(inv.written)) && inv.written.includes("/")) return true;
  if (!isInterpreter(inv.name)) return false;
  const first = inv.args.find((a) => !a.startsWith("-"));
  return first !== undefined && files.has(norm(first));
}
