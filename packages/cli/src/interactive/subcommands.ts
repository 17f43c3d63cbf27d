// `hands sessions` (saved sessions) and `hands init` (a starter AGENTS.md from a project scan).
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionStore, type SessionSummary } from "@hands/agent";
import { dataDir, realFolder, scanProject } from "@hands/sdk/root";
import { UsageError } from "../args.js";
import { oneLine } from "../render.js";
import { formatTable } from "../table.js";

export async function runSubcommand(name: string, argv: string[]): Promise<number> {
  if (name === "sessions") {
    const all = argv.includes("--all");
    const store = new SessionStore(join(dataDir(), "sessions"));
    const ws = realFolder(process.cwd(), "workspace folder");
    const list = store.list().filter((s) => all || s.workspace === ws);
    process.stdout.write(
      `${list.length ? formatSessions(list) : `No sessions${all ? "" : " in this workspace (--all lists every workspace)"}.`}\n`,
    );
    return 0;
  }
  if (name === "init") {
    const ws = realFolder(process.cwd(), "workspace folder");
    const path = join(ws, "AGENTS.md");
    if (existsSync(path) && !argv.includes("--force"))
      throw new UsageError(`${path} already exists (use hands init --force to overwrite it)`);
    writeFileSync(path, starterAgentsMd(ws));
    process.stdout.write(`Wrote ${path}: edit it to tell Hands how this project works.\n`);
    return 0;
  }
  throw new UsageError(`unknown command ${name}`);
}

export function formatSessions(list: SessionSummary[]): string {
  if (list.length === 0) return "No sessions yet.";
  const rows = list.map((s) => [
    s.id,
    new Date(s.updated).toISOString().replace("T", " ").slice(0, 16),
    String(s.steps),
    `$${s.costUsd.toFixed(4)}`,
    oneLine(s.firstRequest || "(no request)", 60),
  ]);
  return formatTable(
    [
      { header: "ID" },
      { header: "last used" },
      { header: "steps", align: "right" },
      { header: "cost", align: "right" },
      { header: "first request" },
    ],
    rows,
  );
}

/** What a scan of the project says: languages, package manager, scripts, folders. */
export function starterAgentsMd(ws: string): string {
  const scan = scanProject(ws);
  const has = (n: string) => scan.entries.includes(n);
  const lines = [
    "# AGENTS.md",
    "",
    "Instructions for coding agents working in this repository.",
    "",
    "## Project",
  ];
  const facts: string[] = [];
  const commands: string[] = [];
  const pkg = scan.packageJson;
  if (pkg) {
    const pm = scan.packageManager ?? "npm";
    facts.push(
      `- JavaScript/TypeScript${has("tsconfig.json") ? " (TypeScript)" : ""}, package manager: ${pm}${pkg.name ? `, package ${pkg.name}` : ""}${pkg.workspaces ? ", workspaces" : ""}.`,
    );
    for (const script of ["build", "test", "lint", "format", "typecheck"]) {
      if (pkg.scripts[script]) commands.push(`- ${script}: \`${pm} run ${script}\` (${pkg.scripts[script]})`);
    }
  }
  if (scan.languages.includes("Python")) {
    facts.push("- Python project.");
    commands.push("- test: `python -m pytest -q`");
  }
  if (has("Cargo.toml")) {
    facts.push("- Rust (cargo).");
    commands.push("- build: `cargo build`", "- test: `cargo test`");
  }
  if (has("go.mod")) {
    facts.push("- Go module.");
    commands.push("- test: `go test ./...`");
  }
  if (has("Makefile"))
    commands.push(
      scan.makeTargets.length
        ? `- \`make\` targets: ${scan.makeTargets.join(", ")} (see Makefile).`
        : "- `make` targets exist: see Makefile.",
    );
  if (scan.dirs.length) facts.push(`- Top-level folders: ${scan.dirs.slice(0, 15).join(", ")}.`);
  if (facts.length === 0) facts.push("- (describe the project here)");
  lines.push(...facts, "", "## Commands", ...(commands.length ? commands : ["- (how to build and test)"]));
  lines.push(
    "",
    "## Conventions",
    "- Keep changes small and focused; match the surrounding code style.",
    "- Run the tests after changing code, and report what they say.",
    "",
  );
  return lines.join("\n");
}
