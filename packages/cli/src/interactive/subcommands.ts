// `hands init`: a starter AGENTS.md from a project scan.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { realFolder, scanProject } from "@hands/sdk/root";
import { UsageError } from "../args.js";

export async function runSubcommand(name: string, argv: string[]): Promise<number> {
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
