// Runs git against a shadow repository that Hands owns: every call names its own git dir, work
// tree and index, and the user's git settings (global and system config, GIT_* variables) are
// kept out, so nothing here reads or writes the workspace's own .git.
import { spawn } from "node:child_process";

export interface ShadowGitOptions {
  gitDir: string;
  workTree: string;
  indexFile: string;
}

export class ShadowGit {
  private readonly env: NodeJS.ProcessEnv;

  constructor(readonly opts: ShadowGitOptions) {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GIT_")) env[k] = v;
    this.env = {
      ...env,
      GIT_DIR: opts.gitDir,
      GIT_WORK_TREE: opts.workTree,
      GIT_INDEX_FILE: opts.indexFile,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      // Older git ignores GIT_CONFIG_GLOBAL; without a home it finds no user config either.
      HOME: opts.gitDir,
      XDG_CONFIG_HOME: opts.gitDir,
      GIT_TERMINAL_PROMPT: "0",
      GIT_AUTHOR_NAME: "hands",
      GIT_AUTHOR_EMAIL: "hands@localhost",
      GIT_COMMITTER_NAME: "hands",
      GIT_COMMITTER_EMAIL: "hands@localhost",
      LC_ALL: "C",
    };
  }

  /** Runs `git args`, feeding `input` on stdin; resolves with stdout, rejects on a non-zero exit. */
  run(args: string[], input?: string | Buffer, extraEnv?: NodeJS.ProcessEnv): Promise<Buffer> {
    return gitCommand(args, { ...this.env, ...extraEnv }, input);
  }

  /** stdout as text without the final newline. */
  async text(args: string[], input?: string | Buffer, extraEnv?: NodeJS.ProcessEnv): Promise<string> {
    return (await this.run(args, input, extraEnv)).toString("utf8").replace(/\n$/, "");
  }
}

export function gitCommand(args: string[], env: NodeJS.ProcessEnv, input?: string | Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", (e) => reject(new Error(`git could not be run: ${e.message}`)));
    child.on("close", (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else {
        const msg = Buffer.concat(err).toString("utf8").trim().split("\n").slice(-3).join(" ");
        const command = args.find((a, i) => !a.startsWith("-") && args[i - 1] !== "-c");
        reject(new Error(`git ${command} failed (exit ${code}): ${msg}`));
      }
    });
    // A command that exits before reading all its input must not crash us with EPIPE.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

/** Whether git can be run. */
export async function hasGit(): Promise<boolean> {
  try {
    return /^git version /.test(
      (await gitCommand(["--version"], { PATH: process.env.PATH ?? "" })).toString(),
    );
  } catch {
    return false;
  }
}

/** Splits NUL-separated git output (-z) into its fields. */
export function splitNul(buf: Buffer): string[] {
  const s = buf.toString("utf8");
  const parts = s.split("\0");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}
