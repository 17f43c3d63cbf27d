// Why a command failed, in one line the model can act on, from facts rather than from the
// error text alone: the cgroup's OOM and PID-limit events (set on the result by the backend),
// `ldd` and `command -v` run in the same sandbox, the package index, and the sandbox's network
// setting. The text of stderr only says where to look; a claim is made only when a fact holds
// (a forged "error while loading shared libraries" whose program ldd finds whole is not one).
import type { PackageIndex } from "./package-index.js";
import { shellQuote } from "./shell-quote.js";
import type { ExecResult, Sandbox } from "./types.js";

export type DiagnosisCause =
  | "oom"
  | "pids"
  | "missing-library"
  | "command-not-found"
  | "network-off"
  | "network-refused"
  | "timeout";

export interface Diagnosis {
  cause: DiagnosisCause;
  /** One line for the model and the user. */
  line: string;
  /** What it rests on: names, packages, limits. */
  facts: Record<string, unknown>;
}

export interface DiagnoseFacts {
  /** The sandbox's network: "none", "host", or "proxy" (an allow-list). */
  network?: "none" | "host" | "proxy";
  limits?: { memoryBytes?: number; pids?: number };
  index?: PackageIndex;
  /** How to build the index, said when there is none. */
  indexHint?: string;
}

const MiB = 1024 * 1024;
const PROBE_TIMEOUT_MS = 10_000;

/** undefined for a command that succeeded or failed in an ordinary way. */
export async function diagnoseFailure(
  sandbox: Sandbox,
  r: ExecResult,
  facts: DiagnoseFacts = {},
): Promise<Diagnosis | undefined> {
  if (r.aborted) return undefined;
  if (r.oomKilled) {
    const mib = facts.limits?.memoryBytes ? Math.round(facts.limits.memoryBytes / MiB) : undefined;
    return {
      cause: "oom",
      line: `killed by the sandbox's memory limit${mib ? ` (${mib} MiB)` : ""}: the kernel's OOM killer ended it. Use less memory (smaller inputs, stream instead of loading whole files, fewer parallel jobs).`,
      facts: { memoryLimitMiB: mib },
    };
  }
  if (r.pidsLimited) {
    const n = facts.limits?.pids;
    return {
      cause: "pids",
      line: `the sandbox's process limit${n ? ` (${n})` : ""} was reached: a fork failed. Start fewer processes at once (make -j2, fewer workers, no runaway loop of background jobs).`,
      facts: { pidsLimit: n },
    };
  }
  if (r.timedOut) return timedOut(sandbox, r);
  if (r.exitCode === 0) return undefined;
  if (r.exitCode === 127) {
    const lib = await missingLibraries(sandbox, r.stderr, facts);
    if (lib) return lib;
    const cmd = await missingCommand(sandbox, r.stderr, facts);
    if (cmd) return cmd;
  }
  return networkFailure(r.stderr, facts.network);
}

/** A timeout, with the process tree the session shell wrote down just before it killed it. */
async function timedOut(sandbox: Sandbox, r: ExecResult): Promise<Diagnosis> {
  const raw = await probe(
    sandbox,
    "cat /tmp/.hands-timeout-tree 2>/dev/null; rm -f /tmp/.hands-timeout-tree",
  );
  const tree = raw
    .split("\n")
    .map((l) => /^(\d+) (\d+) (\S) (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && !(m[4] as string).startsWith("/run/hands/sh "))
    .map((m) => ({
      pid: Number(m[1]),
      ppid: Number(m[2]),
      state: m[3] as string,
      args: (m[4] as string).slice(0, 120),
    }));
  const shown = tree.map((p) => `${p.pid} ${p.args}${p.state === "T" ? " (stopped)" : ""}`).join("; ");
  return {
    cause: "timeout",
    line: `timed out after ${(r.durationMs / 1000).toFixed(1)} s and was killed${tree.length ? `; running then: ${shown}` : ""}. A program waiting for input, a server in the foreground or a slow step: give it input (stdin, --yes), run servers in the background, or raise the timeout.`,
    facts: { processes: tree },
  };
}

/** Runs a small probe in the sandbox; its stdout, or "" when it could not run. */
async function probe(sandbox: Sandbox, script: string): Promise<string> {
  try {
    const r = await sandbox.exec(script, { timeoutMs: PROBE_TIMEOUT_MS, maxOutputBytes: 64 * 1024 });
    return r.stdout;
  } catch {
    return "";
  }
}

/** Which of `pkgs` dpkg says are installed in the sandbox. */
async function installed(sandbox: Sandbox, pkgs: string[]): Promise<Set<string>> {
  if (pkgs.length === 0) return new Set();
  const out = await probe(
    sandbox,
    `dpkg-query -W -f='\${db:Status-Abbrev} \${Package}\\n' ${pkgs.map(shellQuote).join(" ")} 2>/dev/null; true`,
  );
  return new Set(
    out
      .split("\n")
      .filter((l) => l.startsWith("ii "))
      .map((l) => l.slice(3).trim().replace(/:.*$/, "")),
  );
}

function providers(index: PackageIndex | undefined, names: string[], kind: "command" | "library") {
  return names.map((name) => ({ name, packages: index ? index[kind](name) : [] }));
}

function packagesLine(
  found: { name: string; packages: string[] }[],
  have: Set<string>,
  facts: DiagnoseFacts,
  what: string,
): string {
  if (!facts.index)
    return `no package index here to say which Debian package provides it${facts.indexHint ? ` (${facts.indexHint})` : ""}`;
  return found
    .map(({ name, packages }) => {
      if (packages.length === 0) return `no Debian package ships ${what} ${name}`;
      const top = packages.slice(0, 3);
      const inImage = top.filter((p) => have.has(p));
      return inImage.length
        ? `${name} is in package ${inImage.join(", ")}, which is installed: check PATH / LD_LIBRARY_PATH`
        : `Debian package ${top.join(" or ")} provides ${name} — not installed in this sandbox (add it to the image or a template: apt-get install ${top[0]})`;
    })
    .join("; ");
}

/** "prog: error while loading shared libraries: libX.so.N: …", confirmed by ldd on prog. */
async function missingLibraries(
  sandbox: Sandbox,
  stderr: string,
  facts: DiagnoseFacts,
): Promise<Diagnosis | undefined> {
  const m = /^(.+?): error while loading shared libraries: ([^\s:]+):/m.exec(stderr);
  if (!m?.[1]) return undefined;
  const prog = m[1].trim();
  // ldd of the program as the sandbox sees it: a name is looked up on the sandbox's PATH.
  const out = await probe(
    sandbox,
    `p=${shellQuote(prog)}; case "$p" in */*) ;; *) p=$(command -v -- "$p") || exit 0;; esac; [ -f "$p" ] || exit 0; printf 'PROG %s\\n' "$p"; ldd -- "$p" 2>/dev/null; true`,
  );
  const path = /^PROG (.+)$/m.exec(out)?.[1];
  const missing = [...out.matchAll(/^\s*(\S+) => not found$/gm)].map((x) => x[1] as string);
  if (!path || missing.length === 0) return undefined;
  const found = providers(facts.index, missing, "library");
  const have = await installed(sandbox, [...new Set(found.flatMap((f) => f.packages.slice(0, 3)))]);
  return {
    cause: "missing-library",
    line: `${path} needs ${missing.join(", ")}, which ${missing.length > 1 ? "are" : "is"} not in this sandbox (ldd: not found); ${packagesLine(found, have, facts, "a library named")}.`,
    facts: { program: path, libraries: found, installed: [...have] },
  };
}

/** bash's "NAME: command not found" or env's "'NAME': No such file…", confirmed by command -v. */
async function missingCommand(
  sandbox: Sandbox,
  stderr: string,
  facts: DiagnoseFacts,
): Promise<Diagnosis | undefined> {
  const m =
    /(?:^|: )([A-Za-z0-9][A-Za-z0-9._+-]{0,63}): command not found$/m.exec(stderr) ??
    /^\/usr\/bin\/env: '([A-Za-z0-9][A-Za-z0-9._+-]{0,63})': No such file or directory$/m.exec(stderr);
  const name = m?.[1];
  if (!name) return undefined;
  const out = await probe(
    sandbox,
    `command -v -- ${shellQuote(name)} >/dev/null 2>&1 && echo FOUND || echo MISSING`,
  );
  if (!out.includes("MISSING")) return undefined;
  const found = providers(facts.index, [name], "command");
  const have = await installed(sandbox, found[0]?.packages.slice(0, 3) ?? []);
  return {
    cause: "command-not-found",
    line: `\`${name}\` is not installed in this sandbox; ${packagesLine(found, have, facts, "a program named")}.`,
    facts: { command: name, packages: found[0]?.packages ?? [], installed: [...have] },
  };
}

const RESOLVE_FAILED: RegExp[] = [
  /Could not resolve host:? '?([A-Za-z0-9.-]+)/,
  /getaddrinfo (?:EAI_AGAIN|ENOTFOUND) ([A-Za-z0-9.-]+)/,
  /Temporary failure in name resolution/,
  /Name or service not known/,
  /No address associated with hostname/,
  /Failed to resolve '([A-Za-z0-9.-]+)'/,
  /unable to resolve host address '?([A-Za-z0-9.-]+)/,
  /Network is unreachable/,
];

/** A network failure, read against what the sandbox's network setting is (the fact). */
function networkFailure(stderr: string, network: DiagnoseFacts["network"]): Diagnosis | undefined {
  if (network === "host" || network === undefined) return undefined;
  if (network === "none") {
    for (const re of RESOLVE_FAILED) {
      const m = re.exec(stderr);
      if (!m) continue;
      const host = m[1];
      return {
        cause: "network-off",
        line: `the network is off in this sandbox (no DNS, no connections): rerun Hands with --allow-domain ${host ?? "HOST"} to reach ${host ? "that host" : "a host"} only, or --network host; otherwise use what is in the workspace.`,
        facts: { network, ...(host ? { host } : {}) },
      };
    }
    return undefined;
  }
  // The allow-list proxy answers 403 with its own reason (proxy.ts: "hands proxy: refused …").
  const refused = /hands proxy: refused (?:CONNECT )?(?:https?:\/\/)?([A-Za-z0-9.-]+)/.exec(stderr);
  if (refused || /CONNECT tunnel failed, response 403|Received HTTP code 403 from proxy/.test(stderr)) {
    const host = refused?.[1];
    return {
      cause: "network-refused",
      line: `the allow-list refused ${host ?? "that host"}: only the domains given with --allow-domain are reachable; add --allow-domain ${host ?? "HOST"} if it is needed.`,
      facts: { network, ...(host ? { host } : {}) },
    };
  }
  return undefined;
}
