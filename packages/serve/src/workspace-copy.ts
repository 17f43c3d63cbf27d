// Copies a sandbox's folder (fork, snapshot, a sandbox made from a snapshot) with GNU tar, one
// tar packing and one unpacking, as the service. The source is hostile — its sandbox may still be
// running and changing it — so nothing here follows a path the sandbox made: tar walks the tree
// with openat/O_NOFOLLOW and stores symlinks, FIFOs and hard links as what they are (a symlink to
// /etc stays a symlink; a FIFO is never opened), stays on one filesystem, and unpacks into a
// fresh folder nobody else can reach. The copy then belongs to the new sandbox's uid.
import { spawn } from "node:child_process";

/** The agent's folder (its socket) is the service's, never copied. */
const EXCLUDE = "./.hands-agent";
const XATTRS = ["--xattrs", "--xattrs-include=user.*"];

function run(cmd: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/**
 * Copies the tree under `from` into the existing, empty folder `to` (modes, times, user.*
 * xattrs kept), then gives all of it to `owner` when the service runs as root.
 */
export async function copyWorkspace(
  from: string,
  to: string,
  owner?: { uid: number; gid: number },
): Promise<void> {
  const pack = spawn(
    "tar",
    ["-C", from, "--one-file-system", "--numeric-owner", ...XATTRS, `--exclude=${EXCLUDE}`, "-cf", "-", "."],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  // --no-overwrite-dir: folders that exist (the target itself, a warm sandbox's home) keep
  // their owner and mode instead of taking the source's.
  const unpack = spawn("tar", ["-C", to, "--numeric-owner", "--no-overwrite-dir", ...XATTRS, "-xpf", "-"], {
    stdio: ["pipe", "ignore", "pipe"],
  });
  pack.stdout.pipe(unpack.stdin);
  unpack.stdin.on("error", () => {});
  let packErr = "";
  let unpackErr = "";
  pack.stderr.on("data", (d: Buffer) => {
    if (packErr.length < 4000) packErr += d.toString("utf8");
  });
  unpack.stderr.on("data", (d: Buffer) => {
    if (unpackErr.length < 4000) unpackErr += d.toString("utf8");
  });
  const done = (p: ReturnType<typeof spawn>) =>
    new Promise<number | null>((resolve, reject) => {
      p.on("error", reject);
      p.on("close", (code) => resolve(code));
    });
  const [packCode, unpackCode] = await Promise.all([done(pack), done(unpack)]);
  // 1 from the packing tar: a file changed while it was read (the sandbox runs on) — the copy
  // has what was there at that moment, as a copy of a running machine's disk would.
  if (packCode !== 0 && packCode !== 1)
    throw new Error(`copying the sandbox's files failed: ${packErr.trim()}`);
  if (unpackCode !== 0) throw new Error(`copying the sandbox's files failed: ${unpackErr.trim()}`);
  if (owner) {
    // Everything copied, never the agent's folder of a sandbox that already runs (it stays the
    // service's); find does not follow links.
    const r = await run("find", [
      to,
      "-mindepth",
      "1",
      "-path",
      `${to}/.hands-agent`,
      "-prune",
      "-o",
      "-exec",
      "chown",
      "-h",
      "--",
      `${owner.uid}:${owner.gid}`,
      "{}",
      "+",
    ]);
    if (r.code !== 0) throw new Error(`giving the copied files to the sandbox failed: ${r.stderr.trim()}`);
  }
}
