// The bubblewrap command line for a sandbox: which host folders it sees (read-only), the
// workspace (read-write at /workspace), private /tmp and home, namespaces and identity.
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { posix } from "node:path";
import { NON_INTERACTIVE_ENV } from "./env.js";
import { executeOnlyCopy, writePrivateFile } from "./runtime-dir.js";
import { seccompProgram } from "./seccomp.js";

export const WORKSPACE_PATH = "/workspace";
export const SANDBOX_UID = 1000;
export const SANDBOX_HOME = "/home/hands";

export type NetworkMode = "none" | "host" | "proxy";

export interface BwrapArgsOptions {
  workspace: string;
  network: NetworkMode;
  tmpBytes: number;
  env: Record<string, string>;
  /** Host path of the allow-list proxy's Unix socket (network "proxy"). */
  proxySocket?: string;
  /** Workspace paths mounted read-only over the workspace (protected-paths.ts). */
  readOnly?: Array<{ host: string; rel: string }>;
}

/** System folders the sandbox sees read-only (symlinks such as /bin → usr/bin are mirrored). */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** The only parts of /etc a sandbox sees: no passwords, keys or host configuration. */
const ETC_FILES = [
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "ssl",
  "ca-certificates",
  "alternatives",
  "localtime",
  "protocols",
  "services",
  "mime.types",
  "python3",
  "python3.11",
  "gitconfig",
  // Font lookup and Debian's matplotlib default settings (charts drawn in a sandbox).
  "fonts",
  "matplotlibrc",
];

/** Further /proc entries that must not be writable from a sandbox. */
const PROC_READ_ONLY = [
  "/proc/sysrq-trigger",
  "/proc/fs",
  "/proc/irq",
  "/proc/bus",
  "/proc/acpi",
  "/proc/scsi",
  "/proc/mtrr",
  "/proc/pressure",
];

/** Where the session's execute-only shell and output relay are (see runtime-dir.ts). */
export const SESSION_SHELL = "/run/hands/sh";
export const SESSION_RELAY = "/run/hands/cat";

/** Kernel internals under /proc that only root may read on the host: hidden behind /dev/null. */
const PROC_MASKED = [
  "/proc/timer_list",
  "/proc/sched_debug",
  "/proc/slabinfo",
  "/proc/vmallocinfo",
  "/proc/pagetypeinfo",
  "/proc/kpageflags",
  "/proc/kpagecount",
  "/proc/kcore",
  "/proc/latency_stats",
  "/proc/timer_stats",
];

let etcFiles: Record<string, string> | undefined;

/** Synthetic passwd/group/hosts/nsswitch files, written once per process in its private folder. */
function syntheticEtc(): Record<string, string> {
  if (etcFiles) return etcFiles;
  etcFiles = {
    passwd: writePrivateFile(
      "passwd",
      `root:x:0:0:root:/root:/usr/sbin/nologin\nhands:x:${SANDBOX_UID}:${SANDBOX_UID}:hands:${SANDBOX_HOME}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    ),
    group: writePrivateFile("group", `root:x:0:\nhands:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`),
    hosts: writePrivateFile("hosts", "127.0.0.1 localhost hands\n::1 localhost ip6-localhost\n"),
    "nsswitch.conf": writePrivateFile("nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n"),
  };
  return etcFiles;
}

let seccompFile: string | null | undefined;

/** The seccomp program's file (seccomp.ts), or null on an architecture it does not know. */
export function seccompProgramFile(): string | null {
  if (seccompFile === undefined) {
    const program = seccompProgram();
    seccompFile = program ? writePrivateFile("seccomp.bpf", program) : null;
  }
  return seccompFile;
}

/** The descriptor the launcher opens the seccomp program on for bubblewrap. */
export const SECCOMP_FD = 10;

let sessionPrograms: { shell: string; relay: string } | undefined;

/** Execute-only copies of bash and cat (made once per process). */
function sessionProgramCopies(): { shell: string; relay: string } {
  sessionPrograms ??= {
    shell: executeOnlyCopy("sh", "/bin/bash"),
    relay: executeOnlyCopy("cat", existsSync("/usr/bin/cat") ? "/usr/bin/cat" : "/bin/cat"),
  };
  return sessionPrograms;
}

export function sandboxEnv(extra: Record<string, string>): Record<string, string> {
  return {
    PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: SANDBOX_HOME,
    USER: "hands",
    LOGNAME: "hands",
    SHELL: "/bin/bash",
    LANG: "C.UTF-8",
    TERM: "dumb",
    TMPDIR: "/tmp",
    ...NON_INTERACTIVE_ENV,
    ...extra,
    // The session shell's relay (it unsets this before running any command).
    HANDS_RELAY: SESSION_RELAY,
  };
}

export function bwrapArgs(o: BwrapArgsOptions): string[] {
  // --as-pid-1: the session shell itself is PID 1, so no bubblewrap helper that sandboxed code
  // could open /proc/1/fd of holds the session's pipes.
  const a: string[] = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--as-pid-1",
    "--cap-drop",
    "ALL",
  ];
  if (o.network === "host") a.push("--share-net");
  if (seccompProgramFile()) a.push("--seccomp", String(SECCOMP_FD));
  a.push("--uid", String(SANDBOX_UID), "--gid", String(SANDBOX_UID), "--hostname", "hands");
  for (const d of SYSTEM_DIRS) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(d);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) a.push("--symlink", readlinkSync(d), d);
    else if (st.isDirectory()) a.push("--ro-bind", d, d);
  }
  a.push("--dir", "/etc");
  for (const f of ETC_FILES) {
    const p = `/etc/${f}`;
    if (existsSync(p)) a.push("--ro-bind", p, p);
  }
  for (const [f, path] of Object.entries(syntheticEtc())) a.push("--ro-bind", path, `/etc/${f}`);
  if (o.network === "host" && existsSync("/etc/resolv.conf"))
    a.push("--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf");
  // As root, the sandbox user is root outside for file permissions: kernel settings and the
  // like under /proc must be read-only (host sysctls are otherwise writable).
  a.push("--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev");
  // /dev/shm sized like Docker's (64 MiB): bubblewrap's /dev tmpfs has no size of its own.
  a.push("--size", String(Math.min(o.tmpBytes, 64 * 1024 * 1024)), "--tmpfs", "/dev/shm");
  for (const p of PROC_READ_ONLY) a.push("--ro-bind-try", p, p);
  for (const p of PROC_MASKED) if (existsSync(p)) a.push("--ro-bind", "/dev/null", p);
  a.push("--size", String(o.tmpBytes), "--tmpfs", "/tmp");
  a.push("--size", String(o.tmpBytes), "--tmpfs", "/home", "--dir", SANDBOX_HOME);
  a.push(
    "--size",
    String(1024 * 1024),
    "--tmpfs",
    "/run",
    "--dir",
    "/var",
    "--symlink",
    "../tmp",
    "/var/tmp",
  );
  const programs = sessionProgramCopies();
  a.push("--ro-bind", programs.shell, SESSION_SHELL, "--ro-bind", programs.relay, SESSION_RELAY);
  if (o.network === "proxy" && o.proxySocket) a.push("--bind", o.proxySocket, "/run/hands-proxy.sock");
  a.push("--bind", o.workspace, WORKSPACE_PATH);
  for (const r of o.readOnly ?? []) a.push("--ro-bind", r.host, posix.join(WORKSPACE_PATH, r.rel));
  a.push("--chdir", WORKSPACE_PATH);
  // The root itself (bubblewrap's tmpfs, no size cap) is read-only once everything is mounted.
  a.push("--remount-ro", "/");
  a.push("--clearenv");
  for (const [k, v] of Object.entries(o.env)) a.push("--setenv", k, v);
  return a;
}
