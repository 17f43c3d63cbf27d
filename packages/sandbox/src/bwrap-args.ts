// The bubblewrap command line for a sandbox: which host folders it sees (read-only), the
// workspace (read-write at /workspace), private /tmp and home, namespaces and identity.
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { posix } from "node:path";
import { NON_INTERACTIVE_ENV } from "./env.js";
import { executeOnlyCopy, writePrivateFile } from "./runtime-dir.js";
import { seccompProgram } from "./seccomp.js";
import { checkAccount, checkProgramName, PROGRAMS_DIR, type SandboxAccount } from "./types.js";

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
  /** The sandbox's user and home (default `hands`, a private tmpfs /home/hands). */
  account?: SandboxAccount;
  /** Leave the root tmpfs writable (its pages count against the sandbox's memory limit). */
  writableRoot?: boolean;
  /** Host files (programFiles) mounted read-only in PROGRAMS_DIR, by name. */
  programs?: Record<string, string>;
  /** A template's root filesystem (template.ts): its system folders and /etc instead of the host's. */
  rootfs?: string;
}

const programCache = new Map<string, string>();

/** Each script as a read-only, executable file in this process's private folder (once per text). */
export function programFiles(programs: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, text] of Object.entries(programs)) {
    checkProgramName(name);
    const key = `${name}\0${text}`;
    let path = programCache.get(key);
    if (!path) {
      path = writePrivateFile(`program-${programCache.size}-${name}`, text, 0o555);
      programCache.set(key, path);
    }
    out[name] = path;
  }
  return out;
}

export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** System folders the sandbox sees read-only (symlinks such as /bin → usr/bin are mirrored). */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** A template's root filesystem (built by Hands, nothing of the host's) also brings these. */
const ROOTFS_DIRS = ["/opt", "/srv"];

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
  // R's start-up settings (Renviron, ldpaths: /usr/lib/R/etc links here), for the R kernel.
  "R",
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

const etcFiles = new Map<string, Record<string, string>>();

/** passwd and group lines naming `uid` as the account (checked: nothing in them can add a line). */
export function accountEtc(
  name: string,
  home: string,
  uid: number,
  gid: number,
): { passwd: string; group: string } {
  checkAccount({ name, home, homeFolder: "" });
  return {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\n${name}:x:${uid}:${gid}:${name}:${home}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\n${name}:x:${gid}:\nnogroup:x:65534:\n`,
  };
}

/** Synthetic passwd/group/hosts/nsswitch files, written once per process (and account) in its private folder. */
function syntheticEtc(account?: SandboxAccount): Record<string, string> {
  const name = account?.name ?? "hands";
  const home = account?.home ?? SANDBOX_HOME;
  const key = `${name}:${home}`;
  const known = etcFiles.get(key);
  if (known) return known;
  const tag = etcFiles.size === 0 ? "" : `-${etcFiles.size}`;
  const lines = accountEtc(name, home, SANDBOX_UID, SANDBOX_UID);
  const files = {
    passwd: writePrivateFile(`passwd${tag}`, lines.passwd),
    group: writePrivateFile(`group${tag}`, lines.group),
    hosts: writePrivateFile(`hosts${tag}`, "127.0.0.1 localhost hands\n::1 localhost ip6-localhost\n"),
    "nsswitch.conf": writePrivateFile(
      `nsswitch.conf${tag}`,
      "passwd: files\ngroup: files\nhosts: files dns\n",
    ),
  };
  etcFiles.set(key, files);
  return files;
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
    PATH: SANDBOX_PATH,
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
  const from = (p: string) => (o.rootfs ? posix.join(o.rootfs, p) : p);
  for (const d of o.rootfs ? [...SYSTEM_DIRS, ...ROOTFS_DIRS] : SYSTEM_DIRS) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(from(d));
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) a.push("--symlink", readlinkSync(from(d)), d);
    else if (st.isDirectory()) a.push("--ro-bind", from(d), d);
  }
  a.push("--dir", "/etc");
  for (const f of ETC_FILES) {
    const p = `/etc/${f}`;
    if (existsSync(from(p))) a.push("--ro-bind", from(p), p);
  }
  for (const [f, path] of Object.entries(syntheticEtc(o.account))) a.push("--ro-bind", path, `/etc/${f}`);
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
  if (o.account) {
    checkAccount(o.account);
    a.push("--size", String(o.tmpBytes), "--tmpfs", "/home", "--bind", o.account.homeFolder, o.account.home);
  } else a.push("--size", String(o.tmpBytes), "--tmpfs", "/home", "--dir", SANDBOX_HOME);
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
  for (const [name, file] of Object.entries(o.programs ?? {})) {
    checkProgramName(name);
    a.push("--ro-bind", file, `${PROGRAMS_DIR}/${name}`);
  }
  if (o.network === "proxy" && o.proxySocket) a.push("--bind", o.proxySocket, "/run/hands-proxy.sock");
  a.push("--bind", o.workspace, WORKSPACE_PATH);
  for (const r of o.readOnly ?? []) a.push("--ro-bind", r.host, posix.join(WORKSPACE_PATH, r.rel));
  a.push("--chdir", WORKSPACE_PATH);
  // The root itself (bubblewrap's tmpfs, no size cap of its own) is read-only once everything is
  // mounted, unless asked for: then what is written there counts against the memory limit.
  if (!o.writableRoot) a.push("--remount-ro", "/");
  a.push("--clearenv");
  for (const [k, v] of Object.entries(o.env)) a.push("--setenv", k, v);
  return a;
}
