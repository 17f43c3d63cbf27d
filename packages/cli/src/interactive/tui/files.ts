// `@path` in a request: fuzzy completion over the workspace's files (what git would track:
// .gitignore respected), and the file's content attached to the message, capped. The workspace
// is untrusted: a path that leaves it (`..`, an absolute path, a symlink out), a FIFO or a device
// is never read, and nothing blocks.
import { execFile } from "node:child_process";
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import {
  type AutocompleteItem,
  type AutocompleteProvider,
  type AutocompleteSuggestions,
  CombinedAutocompleteProvider,
  fuzzyFilter,
  type SlashCommand,
} from "@mariozechner/pi-tui";

/** Files listed at most (a huge tree still completes quickly). */
const MAX_FILES = 20_000;
/** Bytes of one attached file the model receives. */
export const ATTACH_MAX_BYTES = 64 * 1024;
const SKIP_DIRS = new Set([".git", "node_modules", ".hg", ".svn"]);

/** The workspace's files, relative, `/`-separated: git's view when it is a repository. */
export async function listWorkspaceFiles(workspace: string): Promise<string[]> {
  const viaGit = await new Promise<string[] | undefined>((resolve) => {
    // The workspace's .git/config is untrusted (a clone, or written by a sandboxed command) and
    // git runs here on the host: core.fsmonitor there names a program ls-files would run. The
    // command line's setting wins over the repository's; optional locks off (no index writes).
    execFile(
      "git",
      [
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.untrackedCache=false",
        "-C",
        workspace,
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
      ],
      { maxBuffer: 64 << 20, timeout: 5000, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } },
      (err, stdout) => resolve(err ? undefined : stdout.split("\0").filter(Boolean)),
    );
  });
  if (viaGit) return viaGit.slice(0, MAX_FILES);
  return walk(workspace, ignoreRules(workspace));
}

/** A few .gitignore forms (names, `dir/`, `*.ext`, leading `/`) for folders that are not repositories. */
function ignoreRules(workspace: string): (rel: string, dir: boolean) => boolean {
  let text = "";
  try {
    text = readSmall(join(workspace, ".gitignore"), 64 * 1024)?.toString("utf8") ?? "";
  } catch {
    text = "";
  }
  const rules = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#") && !l.startsWith("!"))
    .map((l) => {
      const dirOnly = l.endsWith("/");
      const anchored = l.startsWith("/");
      const body = l.replace(/^\//, "").replace(/\/$/, "");
      const re = new RegExp(
        `^${body
          .replace(/[.+^${}()|[\]\\]/g, "\\$&")
          .replace(/\*\*/g, "\u0000")
          .replace(/\*/g, "[^/]*")
          .replace(/\?/g, "[^/]")
          .replace(/\u0000/g, ".*")}$`,
      );
      return { re, dirOnly, anchored: anchored || body.includes("/") };
    });
  return (rel, dir) =>
    rules.some(
      (r) => (!r.dirOnly || dir) && (r.anchored ? r.re.test(rel) : r.re.test(rel.split("/").pop() ?? "")),
    );
}

function walk(root: string, ignored: (rel: string, dir: boolean) => boolean): string[] {
  const out: string[] = [];
  const stack = [""];
  while (stack.length && out.length < MAX_FILES) {
    const dir = stack.pop()!;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const rel = dir ? `${dir}/${e.name}` : e.name;
      // Symlinks are listed (their target is checked when attached), never followed here.
      const isDir = e.isDirectory();
      if (isDir && SKIP_DIRS.has(e.name)) continue;
      if (ignored(rel, isDir)) continue;
      if (isDir) stack.push(rel);
      else out.push(rel);
    }
  }
  return out.sort();
}

/** Reads at most `max` bytes of a regular file without blocking; undefined when it is not one. */
function readSmall(path: string, max: number): Buffer | undefined {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(max);
    let got = 0;
    while (got < max) {
      const n = readSync(fd, buf, got, max - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

export interface Attachment {
  path: string;
  /** The text the model receives (capped). */
  content: string;
  bytes: number;
  truncated: boolean;
}

export type AttachResult = { ok: Attachment } | { error: string };

/** The content of `rel` for the model, or why it cannot be attached. */
export function readAttachment(workspace: string, rel: string): AttachResult {
  if (!rel || isAbsolute(rel)) return { error: "not a path inside the workspace" };
  let real: string;
  let root: string;
  try {
    root = realpathSync(workspace);
    real = realpathSync(join(root, rel));
  } catch {
    return { error: "no such file" };
  }
  const inside = relative(root, real);
  if (inside === "" || inside.startsWith(`..${sep}`) || inside === ".." || isAbsolute(inside))
    return { error: "outside the workspace" };
  let buf: Buffer | undefined;
  let size = 0;
  try {
    const fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return { error: "not a regular file" };
      size = st.size;
    } finally {
      closeSync(fd);
    }
    buf = readSmall(real, ATTACH_MAX_BYTES + 1);
  } catch (e) {
    return { error: (e as NodeJS.ErrnoException).code ?? "cannot read it" };
  }
  if (!buf) return { error: "not a regular file" };
  if (buf.includes(0)) return { error: "a binary file" };
  const truncated = buf.length > ATTACH_MAX_BYTES;
  const content = buf.subarray(0, ATTACH_MAX_BYTES).toString("utf8");
  return { ok: { path: rel, content, bytes: Math.max(size, buf.length), truncated } };
}

/** `@path` tokens of a message (quoted `@"a b"` too). */
export function atMentions(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\s)@(?:"([^"]+)"|([^\s"]+))/g)) {
    const p = (m[1] ?? m[2] ?? "").replace(/[,.;:!?)]+$/, "");
    if (p && !out.includes(p)) out.push(p);
  }
  return out;
}

/** The message with each attached file after it, as the model receives it. */
export function withAttachments(text: string, files: Attachment[]): string {
  if (!files.length) return text;
  const blocks = files.map(
    (f) =>
      `<file path="${f.path}"${f.truncated ? ` truncated="first ${ATTACH_MAX_BYTES} bytes of ${f.bytes}"` : ""}>\n${f.content}${f.content.endsWith("\n") ? "" : "\n"}</file>`,
  );
  return `${text}\n\nAttached files:\n${blocks.join("\n")}`;
}

/** Slash commands from pi-tui's provider; `@` completes the workspace's files, fuzzily. */
export class HandsAutocomplete implements AutocompleteProvider {
  private readonly base: CombinedAutocompleteProvider;
  private files: Promise<string[]> | undefined;
  private listedAt = 0;

  constructor(
    commands: SlashCommand[],
    private readonly workspace: string,
  ) {
    this.base = new CombinedAutocompleteProvider(commands, workspace, null);
  }

  private workspaceFiles(): Promise<string[]> {
    // Listed again after a while: the agent creates files during the session.
    if (!this.files || Date.now() - this.listedAt > 10_000) {
      this.listedAt = Date.now();
      this.files = listWorkspaceFiles(this.workspace);
    }
    return this.files;
  }

  async getSuggestions(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
    options: { signal: AbortSignal; force?: boolean },
  ): Promise<AutocompleteSuggestions | null> {
    const before = (lines[cursorLine] ?? "").slice(0, cursorCol);
    const at = /(?:^|\s)(@[^\s"]*)$/.exec(before);
    if (!at) return this.base.getSuggestions(lines, cursorLine, cursorCol, options);
    const prefix = at[1]!;
    const files = await this.workspaceFiles();
    const query = prefix.slice(1);
    const hits = (query ? fuzzyFilter(files, query, (f) => f) : files).slice(0, 50);
    if (!hits.length) return null;
    const items: AutocompleteItem[] = hits.map((f) => ({
      value: /\s/.test(f) ? `@"${f}"` : `@${f}`,
      label: f.split("/").pop() ?? f,
      description: f,
    }));
    return { items, prefix };
  }

  applyCompletion(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
    item: AutocompleteItem,
    prefix: string,
  ) {
    return this.base.applyCompletion(lines, cursorLine, cursorCol, item, prefix);
  }

  shouldTriggerFileCompletion(lines: string[], cursorLine: number, cursorCol: number): boolean {
    return this.base.shouldTriggerFileCompletion(lines, cursorLine, cursorCol);
  }
}
