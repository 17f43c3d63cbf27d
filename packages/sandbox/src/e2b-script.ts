// The shell programs the e2b backend runs inside the remote sandbox (through the SDK's
// commands.run), and the parsers of what they print. Everything the remote prints is untrusted:
// the parsers accept only the exact shapes below and bound what they keep.
import { gunzipSync } from "node:zlib";
import { ansiQuote } from "./session-script.js";

/**
 * Folders never copied either way (at any depth): installed dependencies and caches are large,
 * platform-specific and rebuilt by a command (`npm install` inside the sandbox).
 */
export const SYNC_EXCLUDES: readonly string[] = [
  "node_modules",
  ".venv",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".tox",
];

/** One entry of a workspace listing: f file, d folder, l symlink, o anything else (skipped). */
export interface ManifestEntry {
  type: "f" | "d" | "l" | "o";
  size: number;
  /** Modification time as the side that listed it wrote it (compared only with itself). */
  mtime: string;
  link?: string;
}

export type Manifest = Map<string, ManifestEntry>;

const q = ansiQuote;

function pruneExpr(): string {
  return `\\( ${SYNC_EXCLUDES.map((n) => `-name ${q(n)}`).join(" -o ")} \\) -prune -o`;
}

/** Prints the workspace listing (NUL-separated records, gzip, base64: binary-safe names). */
export function manifestCommand(ws: string): string {
  return `cd ${q(ws)} && find . -mindepth 1 ${pruneExpr()} -printf '%y\\0%s\\0%T@\\0%P\\0%l\\0' | gzip -1 | base64 -w0`;
}

/**
 * Applies a push: removes `deleted` (a NUL list), unpacks `tar`, then prints the new listing.
 * Paths are relative to the workspace and prefixed with "./" (never read as options).
 */
export function pushCommand(ws: string, tar: string | undefined, deleted: string | undefined): string {
  const steps = [`mkdir -p ${q(ws)}`, `cd ${q(ws)}`];
  if (deleted) steps.push(`xargs -0 -r rm -rf -- < ${q(deleted)}`, `rm -f ${q(deleted)}`);
  if (tar) steps.push(`tar -xf ${q(tar)} --no-same-owner`, `rm -f ${q(tar)}`);
  return `set -e; ${steps.join(" && ")}; ${manifestCommand(ws)}`;
}

/** Packs the entries named in `list` (NUL list, "./"-prefixed) into `out`. */
export function packCommand(ws: string, list: string, out: string): string {
  return `cd ${q(ws)} && tar --null --no-recursion -T ${q(list)} -cf ${q(out)}; rc=$?; rm -f ${q(list)}; [ $rc -le 1 ]`;
}

/** Most entries a listing may have (a bigger workspace is refused with a clear error). */
export const MAX_MANIFEST_ENTRIES = 100_000;

/** Parses what `manifestCommand` printed. Throws on anything else. */
export function parseManifest(printed: string): Manifest {
  const text = printed.trim();
  if (!/^[A-Za-z0-9+/=]*$/.test(text)) throw new Error("the sandbox sent a malformed workspace listing");
  let raw: Buffer;
  try {
    raw =
      text === "" ? Buffer.alloc(0) : gunzipSync(Buffer.from(text, "base64"), { maxOutputLength: 64 << 20 });
  } catch (e) {
    throw new Error(`the sandbox sent a malformed workspace listing (${(e as Error).message})`);
  }
  const fields: string[] = [];
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  for (let at = 0; at < raw.length; ) {
    const end = raw.indexOf(0, at);
    if (end < 0) throw new Error("the sandbox sent a malformed workspace listing");
    try {
      fields.push(utf8.decode(raw.subarray(at, end)));
    } catch {
      fields.push("\uFFFD"); // not UTF-8: such a name cannot be named back, the entry is skipped
    }
    at = end + 1;
  }
  if (fields.length % 5 !== 0) throw new Error("the sandbox sent a malformed workspace listing");
  if (fields.length / 5 > MAX_MANIFEST_ENTRIES)
    throw new Error(`the sandbox's workspace has more than ${MAX_MANIFEST_ENTRIES} entries`);
  const out: Manifest = new Map();
  for (let i = 0; i < fields.length; i += 5) {
    const [y, size, mtime, path, link] = fields.slice(i, i + 5) as [string, string, string, string, string];
    if (!path || !/^\d+$/.test(size)) throw new Error("the sandbox sent a malformed workspace listing");
    if (path.includes("\uFFFD") || link.includes("\uFFFD")) continue;
    const type = y === "f" || y === "d" || y === "l" ? y : "o";
    out.set(path, { type, size: Number(size), mtime, ...(type === "l" ? { link } : {}) });
  }
  return out;
}

export interface ExecScriptOptions {
  token: string;
  command: string;
  /** Remote folder for this command's captured output (and its stdin, written before). */
  dir: string;
  cwd: string;
  headBytes: number;
  tailBytes: number;
  hasStdin: boolean;
  keepBackground: boolean;
}

/**
 * The wrapper one command runs in. The command's output goes to files in the sandbox, and only
 * their head and tail come back (the SDK keeps everything it receives in memory); it runs in
 * its own session, so SIGTERM to the wrapper stops the whole group and still reports what it
 * printed; what it left running is killed at the end unless kept (always after a stop).
 *
 * stdout: head \n TOKEN \n tail \n TOKEN rc outBytes errBytes \n — stderr: head \n TOKEN \n tail
 */
export function execScript(o: ExecScriptOptions): string {
  const d = q(o.dir);
  const input = o.hasStdin ? `${d}/in` : "/dev/null";
  return [
    `__d=${d}; __t=${o.token}; __h=${o.headBytes}; __l=${o.tailBytes}`,
    'mkdir -p "$__d" || exit 125',
    ': > "$__d/o"; : > "$__d/e"',
    "__p=; __stop=",
    // A stop (the host's timeout or abort) ends the command's whole group: TERM, KILL after 1 s.
    `trap '__stop=1; [ -n "$__p" ] && kill -TERM -- -$__p 2>/dev/null' TERM INT HUP`,
    `if cd ${q(o.cwd)} 2>/dev/null; then`,
    `  setsid bash -c ${q(o.command)} < ${input} > "$__d/o" 2> "$__d/e" & __p=$!`,
    '  while :; do wait "$__p"; __rc=$?; kill -0 "$__p" 2>/dev/null || break; [ -n "$__stop" ] && { sleep 1; kill -KILL -- -"$__p" 2>/dev/null; }; done',
    o.keepBackground
      ? '  [ -n "$__stop" ] && kill -KILL -- -"$__p" 2>/dev/null'
      : '  kill -KILL -- -"$__p" 2>/dev/null',
    "else",
    `  printf 'cwd is not a folder in the sandbox: %s\\n' ${q(o.cwd)} > "$__d/e"; __rc=1`,
    "fi",
    // Sizes once each (every $(…) is a fork, and forks are most of the wrapper's cost).
    '__no=$(wc -c < "$__d/o"); __ne=$(wc -c < "$__d/e")',
    '__e() { if [ "$2" -le $((__h + __l)) ]; then cat "$1"; printf \'\\n%s\\n\' "$__t"; else head -c "$__h" "$1"; printf \'\\n%s\\n\' "$__t"; tail -c "$__l" "$1"; fi; }',
    '__e "$__d/o" "$__no"; printf \'\\n%s %s %s %s\\n\' "$__t" "$__rc" "$__no" "$__ne"',
    '__e "$__d/e" "$__ne" >&2',
    'rm -rf "$__d"',
    "exit 0",
  ].join("\n");
}

/** Kills the wrapper `pid` and the session of each command it started (SIGKILL, no report). */
export function killTreeCommand(pid: number): string {
  const n = Math.trunc(pid);
  return `for c in $(pgrep -P ${n} 2>/dev/null); do kill -KILL -- -$c 2>/dev/null; done; kill -KILL ${n} 2>/dev/null; true`;
}

export interface ParsedExec {
  stdout: string;
  stderr: string;
  exitCode: number;
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
}

function joinCut(head: string, tail: string, total: number, kept: number): { text: string; cut: boolean } {
  if (total <= kept) return { text: head, cut: false };
  return { text: `${head}\n[… ${total - kept} bytes of output truncated …]\n${tail}`, cut: true };
}

/** Reads the wrapper's output back; undefined when it is not what the wrapper prints. */
export function parseExecOutput(
  stdout: string,
  stderr: string,
  token: string,
  keptPerStream: number,
): ParsedExec | undefined {
  const sep = `\n${token}\n`;
  const status = new RegExp(`\\n${token} (\\d+) (\\d+) (\\d+)\\n$`).exec(stdout);
  if (!status) return undefined;
  const body = stdout.slice(0, status.index);
  const i = body.indexOf(sep);
  const j = stderr.indexOf(sep);
  if (i < 0 || j < 0) return undefined;
  const outBytes = Number(status[2]);
  const errBytes = Number(status[3]);
  const out = joinCut(body.slice(0, i), body.slice(i + sep.length), outBytes, keptPerStream);
  const err = joinCut(stderr.slice(0, j), stderr.slice(j + sep.length), errBytes, keptPerStream);
  return {
    stdout: out.text,
    stderr: err.text,
    exitCode: Number(status[1]),
    stdoutBytes: outBytes,
    stderrBytes: errBytes,
    truncated: out.cut || err.cut,
  };
}
