// A cheap look at a project's top level (one readdir, package.json, the head of a Makefile):
// languages, package manager, scripts, build files. `hands init` writes it into AGENTS.md;
// memory keeps it as facts about the workspace for the next task.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export interface ProjectScan {
  /** Top-level names, sorted. */
  entries: string[];
  /** Top-level folders (not hidden, not node_modules). */
  dirs: string[];
  packageJson?: { name?: string; scripts: Record<string, string>; workspaces: boolean };
  packageManager?: "npm" | "pnpm" | "yarn" | "bun";
  /** The file that told which package manager (a lockfile), if any. */
  lockfile?: string;
  languages: string[];
  /** Build and project files present: Makefile, pyproject.toml, Cargo.toml… */
  buildFiles: string[];
  /** Targets of the Makefile (from its first 64 KB). */
  makeTargets: string[];
}

const BUILD_FILES = [
  "Makefile",
  "CMakeLists.txt",
  "pyproject.toml",
  "setup.py",
  "requirements.txt",
  "Cargo.toml",
  "go.mod",
  "pom.xml",
  "build.gradle",
  "Gemfile",
  "tsconfig.json",
  "Dockerfile",
];
const LOCKFILES: [string, ProjectScan["packageManager"]][] = [
  ["pnpm-lock.yaml", "pnpm"],
  ["yarn.lock", "yarn"],
  ["bun.lockb", "bun"],
  ["package-lock.json", "npm"],
];

export function scanProject(ws: string): ProjectScan {
  let entries: string[];
  try {
    entries = readdirSync(ws).sort();
  } catch {
    entries = [];
  }
  const has = (n: string) => entries.includes(n);
  const scan: ProjectScan = {
    entries,
    dirs: entries.filter((e) => !e.startsWith(".") && e !== "node_modules" && isDir(join(ws, e))),
    languages: [],
    buildFiles: BUILD_FILES.filter(has),
    makeTargets: has("Makefile") ? makeTargets(join(ws, "Makefile")) : [],
  };
  if (has("package.json")) {
    const pkg = readJson(join(ws, "package.json"));
    const scripts: Record<string, string> = {};
    if (pkg.scripts && typeof pkg.scripts === "object")
      for (const [k, v] of Object.entries(pkg.scripts)) if (typeof v === "string") scripts[k] = v;
    scan.packageJson = {
      ...(typeof pkg.name === "string" ? { name: pkg.name } : {}),
      scripts,
      workspaces: Boolean(pkg.workspaces),
    };
    const lock = LOCKFILES.find(([f]) => has(f));
    scan.packageManager = lock?.[1] ?? "npm";
    if (lock) scan.lockfile = lock[0];
    scan.languages.push(has("tsconfig.json") ? "TypeScript" : "JavaScript");
  }
  if (has("pyproject.toml") || has("setup.py") || has("requirements.txt")) scan.languages.push("Python");
  if (has("Cargo.toml")) scan.languages.push("Rust");
  if (has("go.mod")) scan.languages.push("Go");
  if (has("pom.xml") || has("build.gradle")) scan.languages.push("Java");
  if (has("Gemfile")) scan.languages.push("Ruby");
  if (has("CMakeLists.txt")) scan.languages.push("C/C++");
  return scan;
}

function readJson(path: string): Record<string, unknown> {
  try {
    const v = JSON.parse(readFileSync(path, "utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function makeTargets(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8").slice(0, 65_536);
  } catch {
    return [];
  }
  const targets = new Set<string>();
  for (const m of text.matchAll(/^([A-Za-z0-9][\w.-]*)\s*:(?!=)/gm)) targets.add(m[1]!);
  return [...targets].slice(0, 20);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** A fact about the workspace for memory: the newest one per key is kept. */
export interface RepoFact {
  key: string;
  text: string;
}

const TEST_COMMAND = /\b(test|tests|pytest|jest|vitest|mocha|spec)\b/;
const BUILD_COMMAND = /\b(build|compile|tsc|make|cmake)\b/;

/** What a scan (and the commands that worked in a run) says about the repository, as facts. */
export function repoFacts(scan: ProjectScan, commandsThatWorked: string[] = []): RepoFact[] {
  const facts: RepoFact[] = [];
  const add = (key: string, text: string) => facts.push({ key, text });
  if (scan.languages.length) add("languages", `Languages: ${scan.languages.join(", ")}.`);
  const pkg = scan.packageJson;
  if (pkg) {
    const pm = scan.packageManager ?? "npm";
    add(
      "package-manager",
      `Package manager: ${pm}${scan.lockfile ? ` (${scan.lockfile})` : ""}${pkg.name ? `; package ${pkg.name}` : ""}${pkg.workspaces ? "; workspaces" : ""}.`,
    );
    const scripts = Object.entries(pkg.scripts).slice(0, 15);
    if (scripts.length)
      add(
        "scripts",
        `package.json scripts (${pm} run NAME): ${scripts.map(([k, v]) => `${k} = ${v.slice(0, 100)}`).join("; ")}.`,
      );
  }
  if (scan.buildFiles.length)
    add(
      "build-files",
      `Build files: ${scan.buildFiles
        .map((f) =>
          f === "Makefile" && scan.makeTargets.length
            ? `Makefile (targets: ${scan.makeTargets.join(", ")})`
            : f,
        )
        .join(", ")}.`,
    );
  if (scan.dirs.length) add("folders", `Top-level folders: ${scan.dirs.slice(0, 15).join(", ")}.`);
  const test = commandsThatWorked.findLast((c) => TEST_COMMAND.test(c));
  if (test) add("test-command", `Test command that worked: ${test}`);
  const build = commandsThatWorked.findLast((c) => !TEST_COMMAND.test(c) && BUILD_COMMAND.test(c));
  if (build) add("build-command", `Build command that worked: ${build}`);
  return facts;
}
