// Files in and out of a sandbox, through the host path of its workspace. Every path is
// confined to the workspace (`..`, absolute paths and symlinks that lead out are refused),
// including each entry of an uploaded tar archive.
import { spawn } from "node:child_process";
import { copyFile, lstat, mkdir, mkdtemp, readdir, readlink, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, posix, relative, resolve } from "node:path";
import { confinePath, isInside, SandboxPathError } from "./confine.js";
import { LocalSandbox } from "./local.js";

export class FileApi {
  private readonly local: LocalSandbox;

  constructor(readonly workspace: string) {
    this.local = new LocalSandbox({ workspace });
  }

  readFile(path: string): Promise<Buffer> {
    return this.local.readFile(path);
  }

  writeFile(path: string, data: string | Uint8Array): Promise<void> {
    return this.local.writeFile(path, data);
  }

  /** The sandbox-side path for a working directory given relative to the workspace. */
  async sandboxCwd(cwd: string, mount: string): Promise<string> {
    const host = await confinePath(this.workspace, cwd);
    const rel = relative(await realWorkspace(this.workspace), host);
    return rel ? posix.join(mount, ...rel.split("/")) : mount;
  }

  async packTar(path: string): Promise<Buffer> {
    const dir = await confinePath(this.workspace, path);
    const { stdout, stderr, code } = await runTar(["-C", dir, "-cf", "-", "."]);
    if (code !== 0) throw new Error(`tar failed: ${stderr.trim()}`);
    return stdout;
  }

  /**
   * Unpacks `tar` into a folder of the workspace. Symlinks that lead out are refused unless
   * `keepOutwardLinks` (restoring a snapshot the sandbox made itself); nothing is ever written
   * through a link.
   */
  async unpackTar(path: string, tar: Uint8Array, keepOutwardLinks = false): Promise<void> {
    const target = await confinePath(this.workspace, path);
    const staging = await mkdtemp(join(tmpdir(), "hands-upload-"));
    try {
      // GNU tar strips leading "/" and "../" and delays dangerous symlinks; we check again.
      const { stderr, code } = await runTar(
        ["-C", staging, "--no-same-owner", "--no-same-permissions", "-xf", "-"],
        tar,
      );
      if (code !== 0) {
        if (/contains '\.\.'|leading/i.test(stderr))
          throw new SandboxPathError(`archive entries lead out of the folder: ${stderr.trim()}`);
        throw new Error(`tar failed: ${stderr.trim()}`);
      }
      await mkdir(target, { recursive: true });
      await this.copyIn(
        staging,
        staging,
        relative(await realWorkspace(this.workspace), target),
        keepOutwardLinks,
      );
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  private async copyIn(
    staging: string,
    dir: string,
    targetRel: string,
    keepOutwardLinks: boolean,
  ): Promise<void> {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const src = join(dir, e.name);
      const rel = join(targetRel, relative(staging, src));
      const dest = await confinePath(this.workspace, rel);
      if (e.isSymbolicLink()) {
        const to = await readlink(src);
        const resolved = isAbsolute(to) ? to : resolve(dirname(src), to);
        if (!keepOutwardLinks && (isAbsolute(to) || !isInside(staging, resolved)))
          throw new SandboxPathError(
            `archive entry is a symlink leading out: ${relative(staging, src)} -> ${to}`,
          );
        await rm(dest, { force: true });
        await symlink(to, dest);
      } else if (e.isDirectory()) {
        const st = await lstat(dest).catch(() => undefined);
        if (st && !st.isDirectory()) throw new SandboxPathError(`not a directory: ${rel}`);
        await mkdir(dest, { recursive: true });
        await this.copyIn(staging, src, targetRel, keepOutwardLinks);
      } else if (e.isFile()) {
        await mkdir(dirname(dest), { recursive: true });
        await rm(dest, { force: true }); // never write through an existing symlink
        await copyFile(src, dest);
      }
    }
  }

  /** Empties the workspace and unpacks `tar` into it (restore of a snapshot). */
  async replaceWithTar(tar: Uint8Array): Promise<void> {
    const root = await realWorkspace(this.workspace);
    for (const name of await readdir(root)) await rm(join(root, name), { recursive: true, force: true });
    await this.unpackTar(".", tar, true);
  }
}

async function realWorkspace(ws: string): Promise<string> {
  return confinePath(ws, ".");
}

export function runTar(
  args: string[],
  input?: Uint8Array,
): Promise<{ stdout: Buffer; stderr: string; code: number | null }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn("tar", args, { stdio: ["pipe", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    child.on("error", reject);
    child.stdin.on("error", () => {});
    child.stdin.end(input ? Buffer.from(input) : undefined);
    child.on("close", (code) => resolvePromise({ stdout: Buffer.concat(chunks), stderr, code }));
  });
}
