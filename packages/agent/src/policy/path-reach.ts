// Where a path a command deletes or writes can reach: inside the workspace, a temporary
// folder, somewhere else, the whole system (`/`, a home, a system folder), a disk device, or
// only known at run time. Braces are expanded (`/{*,}` is `/*` and `/`), a glob is judged by
// the folder it sweeps (`/?*`, `/[a-z]*`, `~/.*` all sweep `/` or `~`), `~user` is another
// home, and relative paths are taken from the folder the line's `cd`s left it in.
import { expandBraces } from "./braces.js";
import { UNKNOWN } from "./shell-parse.js";

export { expandBraces } from "./braces.js";

export type Reach = "inside" | "temp" | "sink" | "settings" | "outside" | "unknown" | "device" | "sweeping";

/** How bad each reach is; a path with several alternatives gets the worst. */
const RANK: Record<Reach, number> = {
  sink: 0,
  inside: 0,
  temp: 0,
  settings: 2,
  outside: 2,
  unknown: 3,
  device: 4,
  sweeping: 4,
};

export interface Where {
  /** The folder the command runs in (ShellCommand.cwd: "." is the session's folder). */
  cwd: string;
  /** Absolute paths of the workspace as the command sees it (host path, /workspace). */
  workspaces: readonly string[];
}

const SYSTEM_DIRS =
  "bin|boot|dev|etc|home|lib|lib32|lib64|libx32|opt|proc|root|run|sbin|srv|sys|usr|var|snap|mnt|media|nix|Users|System|Library|Applications";
const SWEEPING = new RegExp(`^(/|~|/\\*|~/\\*|/(${SYSTEM_DIRS})(/\\*)?)$`);
const SYSTEM_DIR = new RegExp(`^/(${SYSTEM_DIRS})$`);
const BENIGN_DEVICES =
  /^\/dev\/(null|zero|full|random|urandom|stdin|stdout|stderr|tty|ptmx|fd(\/.*)?|pts\/.*|shm\/.*|mqueue\/.*)$/;
const TEMP = /^\/(tmp|var\/tmp|dev\/shm)(\/|$)/;
const GLOB = /[*?[]|[@!+]\(/;

/**
 * `//`, `/./`, `..` and trailing slashes resolved lexically. `~`, `~/x` stay under `~`;
 * another user's home (`~root`) is `~` too. Relative paths stay relative, with the `..`
 * that climb out of the starting folder kept in front.
 */
export function normalizeAny(p: string): string {
  let prefix = "";
  let s = p;
  if (/^~[^/]+/.test(s) && !/^~[+-]/.test(s)) s = `~${s.replace(/^~[^/]+/, "")}`;
  if (s === "~" || s.startsWith("~/")) {
    prefix = "~";
    s = s.slice(1) || "/";
  } else if (s.startsWith("/")) prefix = "";
  else prefix = ".";
  const parts: string[] = [];
  let up = 0;
  for (const seg of s.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (parts.length > 0) parts.pop();
      else if (prefix === ".") up++;
      else if (prefix === "~") return "/"; // above the home folder
      continue;
    }
    parts.push(seg);
  }
  if (prefix === ".") return [...Array<string>(up).fill(".."), ...parts].join("/") || ".";
  const out = `/${parts.join("/")}`;
  return prefix === "~" ? (out === "/" ? "~" : `~${out}`) : out;
}

/** Where one path reaches, the worst of its brace alternatives. */
export function reachOf(path: string, where: Where): Reach {
  let worst: Reach | undefined;
  for (const alt of expandBraces(path)) {
    const r = reachOne(alt, where);
    if (worst === undefined || RANK[r] > RANK[worst]) worst = r;
    if (RANK[worst] === 4) break;
  }
  return worst ?? "inside";
}

function reachOne(path: string, where: Where): Reach {
  if (path === "") return "inside";
  let p = path;
  if (p === "~+" || p.startsWith("~+/")) p = where.cwd + p.slice(2);
  if (p === "~-" || p.startsWith("~-/")) return "unknown";
  const full = relativeTo(where.cwd, p);
  if (full.includes(UNKNOWN)) return "unknown";
  const g = GLOB.exec(full);
  if (g) {
    // A glob can name anything in the folder where it starts: judge that folder's children.
    const cut = full.lastIndexOf("/", g.index);
    const root = cut < 0 ? "." : cut === 0 ? "/" : full.slice(0, cut);
    const n = normalizeAny(root);
    if (n === "/" || n === "~" || SYSTEM_DIR.test(n)) return "sweeping";
    return reachOne(`${root}/x`, where);
  }
  const n = normalizeAny(full);
  if (SWEEPING.test(n)) return "sweeping";
  if (n.startsWith("~")) return "outside";
  if (!n.startsWith("/")) return n === ".." || n.startsWith("../") ? "outside" : insideKind(n);
  for (const ws of where.workspaces) {
    const root = ws.replace(/\/+$/, "");
    if (n === root) return "inside";
    if (root && n.startsWith(`${root}/`)) return insideKind(n.slice(root.length + 1));
  }
  if (n.startsWith("/dev/")) return BENIGN_DEVICES.test(n) ? "sink" : "device";
  if (TEMP.test(n)) return "temp";
  return "outside";
}

/** A relative path inside the workspace: Hands' settings and git's hooks and config are special. */
function insideKind(rel: string): Reach {
  return /^(\.hands(\/|$)|\.git\/(hooks(\/|$)|config$))/.test(rel) ? "settings" : "inside";
}

function relativeTo(cwd: string, p: string): string {
  if (p.startsWith("/") || p.startsWith("~") || cwd === ".") return p;
  return `${cwd.replace(/\/+$/, "")}/${p}`;
}

/** True when the reach is worse than the workspace or a temporary folder. */
export function leavesWorkspace(r: Reach): boolean {
  return RANK[r] >= 2;
}
