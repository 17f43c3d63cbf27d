// Long-lived processes (long-lived.ts) in a docker sandbox: one more `exec` in the session's
// container, so with its user, limits, seccomp profile and network. A running container takes no
// new mounts, and the engine's archive API cannot write to its tmpfs folders under a read-only
// root, so "read-only binds" are copied instead: a root-owned tar stream is unpacked by root
// (`tar -x` through an exec) into DOCKER_COPY_ROOT, a root-owned tmpfs of the container (with
// exec: docker's /tmp is noexec) that the sandbox's user can read but not change. Its pages count
// against the container's memory limit, like every tmpfs there.
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { basename, dirname, posix } from "node:path";
import { PassThrough, type Readable } from "node:stream";
import type Dockerode from "dockerode";
import type { LongLivedOptions, LongLivedProcess } from "./long-lived.js";

/** Where docker copies a long-lived process's read-only folders (bind paths must be under it). */
export const DOCKER_COPY_ROOT = "/run/hands/lsp";
/** Its size limit (node and two language servers take about 160 MB). */
export const DOCKER_COPY_BYTES = 320 * 1024 * 1024;

/** What a container has had copied into it already (copies are made once per container). */
export interface DockerCopies {
  paths: Set<string>;
}

/** How long a root helper command (mkdir, the copy's tar) may take. */
const ROOT_EXEC_TIMEOUT_MS = 120_000;

interface ExecRun {
  exitCode: number;
  output: string;
}

/**
 * Runs `cmd` as root in the container to its end, feeding it what `input()` returns when given.
 * `input` is called only once the exec's stream is open: a child's stdout that nobody reads by
 * the time the child exits is drained and dropped by Node, so a tar started earlier and faster
 * than the engine would leave the container's tar waiting for an archive that never comes.
 */
async function runAsRoot(
  container: Dockerode.Container,
  cmd: string[],
  input?: () => Readable,
): Promise<ExecRun> {
  const exec = await container.exec({
    Cmd: cmd,
    User: "0:0",
    AttachStdin: input !== undefined,
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: input !== undefined });
  let output = "";
  stream.on("data", (c: Buffer) => {
    output = (output + c.toString("utf8")).slice(-2000);
  });
  if (input) {
    const stdin = input();
    // Not half-closed at the end: dockerd may then drop stdin it has not passed on yet. tar
    // stops at the archive's end marker by itself.
    stdin.pipe(stream as unknown as NodeJS.WritableStream, { end: false });
    stdin.once("error", () => stream.end());
  }
  // Bounded: a copy whose input the engine never delivers would otherwise wait forever (and
  // with it the language server's start and whatever awaits it).
  let timer: NodeJS.Timeout | undefined;
  const ended = await new Promise<boolean>((r) => {
    stream.once("end", () => r(true));
    stream.once("close", () => r(true));
    timer = setTimeout(() => r(false), ROOT_EXEC_TIMEOUT_MS);
  });
  clearTimeout(timer);
  if (!ended) {
    (stream as { destroy?: () => void }).destroy?.();
    throw new Error(
      `docker: \`${cmd.join(" ")}\` in the container did not end within ${ROOT_EXEC_TIMEOUT_MS / 1000} s`,
    );
  }
  const info = await exec.inspect();
  return { exitCode: info.ExitCode ?? -1, output: output.replace(/[^\x20-\x7e\n]/g, "").trim() };
}

/** A tar stream of `host` (a folder's contents, or one file named `name`), owned by root. */
function tarOf(host: string, name: string | undefined): Readable {
  const args = ["-c", "-f", "-", "--owner=0", "--group=0", "--numeric-owner", "--exclude=*.map"];
  const st = statSync(host);
  if (st.isDirectory()) args.push("-C", host, ".");
  else {
    const file = basename(host);
    args.push("-C", dirname(host), `--transform=s|^${file.replace(/[^\w.-]/g, "")}$|${name ?? file}|`, file);
  }
  const child = spawn("tar", args, { stdio: ["ignore", "pipe", "ignore"] });
  // A tar that fails part-way (an unreadable file) ends the copy with an error, not a wait.
  child.once("exit", (code) => {
    if (code !== 0) child.stdout.destroy(new Error(`tar of ${host} failed (exit ${code})`));
  });
  return child.stdout;
}

async function copyIn(container: Dockerode.Container, host: string, path: string): Promise<void> {
  const dir = statSync(host).isDirectory();
  const target = dir ? path : posix.dirname(path);
  if (dir) {
    const made = await runAsRoot(container, ["mkdir", "-m", "0755", "--", path]);
    if (made.exitCode !== 0) throw new Error(`cannot make ${path} in the container: ${made.output}`);
  }
  const r = await runAsRoot(
    container,
    ["tar", "-x", "-f", "-", "--no-same-owner", "--no-overwrite-dir", "-C", target],
    () => tarOf(host, dir ? undefined : posix.basename(path)),
  );
  if (r.exitCode !== 0) throw new Error(`cannot copy ${host} into the container: ${r.output}`);
}

/** Whether host process `pid` runs `argv` (so a remote engine's PID never names a local process). */
function isHostProcess(pid: number, argv: string[]): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8") === `${argv.join("\0")}\0`;
  } catch {
    return false;
  }
}

/** Starts `argv` in the container (after copying its read-only folders), as the sandbox's user. */
export async function spawnDockerLongLived(
  container: Dockerode.Container,
  demux: (stream: NodeJS.ReadableStream, out: PassThrough, err: PassThrough) => void,
  copies: DockerCopies,
  workspacePath: string,
  argv: string[],
  options: LongLivedOptions = {},
): Promise<LongLivedProcess> {
  if (argv.length === 0) throw new Error("no program to run");
  for (const b of options.readOnlyBinds ?? []) {
    if (copies.paths.has(b.path)) continue;
    const rel = posix.relative(DOCKER_COPY_ROOT, b.path);
    if (rel === "" || rel.startsWith("..") || posix.isAbsolute(rel) || rel.includes("/"))
      throw new Error(`docker: a read-only folder must be a direct child of ${DOCKER_COPY_ROOT}: ${b.path}`);
    await copyIn(container, b.host, b.path);
    copies.paths.add(b.path);
  }
  const exec = await container.exec({
    Cmd: argv,
    Env: Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`),
    WorkingDir: workspacePath,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = await exec.start({ hijack: true, stdin: true });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  demux(stream, stdout, stderr);
  let hostPid = 0;
  void exec
    .inspect()
    .then((i) => {
      hostPid = i.Pid ?? 0;
    })
    .catch(() => {});
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const done = () => {
      stdout.end();
      stderr.end();
      void exec
        .inspect()
        .then((i) => resolve({ code: i.Running ? null : (i.ExitCode ?? null), signal: null }))
        .catch(() => resolve({ code: null, signal: null }));
    };
    stream.once("end", done);
    stream.once("close", done);
    stream.once("error", done);
  });
  const stdin = new PassThrough();
  stdin.pipe(stream as unknown as NodeJS.WritableStream);
  stdin.on("error", () => {});
  return {
    stdin,
    stdout,
    stderr,
    workspacePath,
    exited,
    kill: () => {
      // The engine runs here: SIGKILL from the host (the exec's process in the host's view).
      if (hostPid > 0 && isHostProcess(hostPid, argv))
        try {
          process.kill(hostPid, "SIGKILL");
        } catch {}
      (stream as { destroy?: () => void }).destroy?.();
    },
  };
}
