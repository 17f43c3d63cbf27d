// The help of each `hands` subcommand and of each of their own commands, in one light module:
// `--help` prints these without loading (or running) the command itself.

/** One command of a subcommand (`hands memory show`): its usage line and what it does. */
export interface SubcommandHelp {
  name: string;
  usage: string;
  about: string;
}

/** A subcommand's help: its usage, its own commands' lines, and what follows them. */
export function commandHelp(usage: string, subs: readonly SubcommandHelp[], footer = ""): string {
  const column = 29;
  const indent = " ".repeat(column);
  const lines = subs.map((s) => {
    const about = s.about.split("\n").join(`\n${indent}`);
    const head = `  ${s.usage}`;
    return head.length < column ? `${head.padEnd(column)}${about}` : `${head}\n${indent}${about}`;
  });
  return `${usage}\n\n${lines.join("\n")}${footer ? `\n\n${footer}` : ""}`;
}

/** The help of one command of a subcommand (`hands memory show --help`). */
export function oneCommandHelp(parent: string, sub: SubcommandHelp, footer = ""): string {
  return `Usage: hands ${parent} ${sub.usage}\n\n${sub.about}${footer ? `\n\n${footer}` : ""}`;
}

export const SESSIONS_HELP = `Usage: hands sessions [--all]

Lists the saved sessions of this workspace (id, last used, steps, cost, first request);
resume one with hands --resume ID, or the last one with hands --continue.

  --all       every workspace's sessions`;

export const INIT_HELP = `Usage: hands init [--force]

Writes a starter AGENTS.md in the current folder from a scan of the project (languages,
package manager, scripts, folders): edit it to tell Hands how the project works.

  --force     overwrite an AGENTS.md that is already there`;

export const MEMORY_COMMANDS: readonly SubcommandHelp[] = [
  { name: "ls", usage: "ls [--scope S] [--layer L] [--limit N]", about: "chunks, newest first" },
  {
    name: "show",
    usage: "show [ID]",
    about:
      "without ID: this workspace's last context (each item's layer,\nimportance, form, pointer and why it was in it);\nwith ID: one chunk, its originals and its history",
  },
  {
    name: "search",
    usage: "search QUERY [--budget N] [--scope S]",
    about: "budgeted retrieval, as the agent would get it",
  },
  { name: "stats", usage: "stats", about: "counts by layer, tokens, events" },
  { name: "export", usage: "export [--scope S]", about: "snapshot (all chunks) as JSON on stdout" },
];

const MEMORY_FOOTER = "  --db FILE   memory file (default: <data dir>/memory.db)";

export const MEMORY_HELP = commandHelp(
  "Usage: hands memory <command> [options]",
  MEMORY_COMMANDS,
  MEMORY_FOOTER,
);

export const SANDBOX_COMMANDS: readonly SubcommandHelp[] = [
  { name: "ls", usage: "ls", about: "sessions on this machine (docker containers, bwrap cgroups)" },
  {
    name: "exec",
    usage: "exec [--sandbox K] [--session ID] [--network host] [--template T] -- CMD [ARG...]",
    about:
      "run CMD with its arguments exactly as given, in session ID\n(docker), or one-shot in a fresh sandbox of the current folder",
  },
  { name: "rm", usage: "rm ID...", about: "end sessions (remove the container / kill the cgroup)" },
  {
    name: "prune",
    usage: "prune [--max-age AGE]",
    about:
      "remove leftovers of crashed runs (and sessions older than AGE:\nminutes, or a duration such as 90s, 30m, 2h, 1d)",
  },
  {
    name: "doctor",
    usage: "doctor [--json] [--sandbox K]",
    about:
      "check every backend this machine could use (bubblewrap and user\nnamespaces, cgroups, Docker and containerd, the image, gVisor, disk\nspace, data folders, the allow-list proxy, a configured hands serve),\neach with its fix; exit 1 when the default backend (or K) cannot work",
  },
  {
    name: "image",
    usage: "image --list [--sandbox docker|bwrap] [--json]",
    about:
      "what the sandbox image has (languages and tools with versions,\nnotable Python libraries), asked of a real sandbox of it",
  },
  {
    name: "template",
    usage:
      "template build NAME [--apt PKG]... [--pip PKG]... [--npm PKG]... [--run CMD]... [--recipe FILE] | list | rm NAME",
    about:
      "local templates: the image plus packages, built offline-capable from\nthe host's apt and cached by a hash of the recipe; use with\nexec --template NAME (docker, gVisor, and bwrap as a root filesystem)",
  },
  {
    name: "package-index",
    usage: "package-index [--force]",
    about:
      "fetch the Debian suite's Contents index from apt's mirror once and\nkeep which packages provide each program and shared library, so a\nfailed command's result can name the package it lacks (build-image\ndoes this too)",
  },
  {
    name: "build-image",
    usage: "build-image [--force]",
    about:
      "build the docker backend's image offline (debootstrap + docker\nimport; needs root, apt's Debian mirror and dockerd)",
  },
];

export const SANDBOX_HELP = commandHelp("Usage: hands sandbox <command>", SANDBOX_COMMANDS);

/** The help of `hands <parent> <name>`, when `name` is one of `subs`. */
export function subcommandHelpOf(
  parent: string,
  subs: readonly SubcommandHelp[],
  name: string | undefined,
  footer = "",
): string | undefined {
  const sub = subs.find((s) => s.name === name);
  return sub ? oneCommandHelp(parent, sub, footer) : undefined;
}

export const memoryCommandHelp = (name: string | undefined) =>
  subcommandHelpOf("memory", MEMORY_COMMANDS, name, MEMORY_FOOTER);
export const sandboxCommandHelp = (name: string | undefined) =>
  subcommandHelpOf("sandbox", SANDBOX_COMMANDS, name);

/** Every subcommand of `hands`, as `hands --help` lists it (commands.ts runs each). */
export const COMMAND_LINES = [
  { name: "sessions", line: "hands sessions      list saved sessions (--all: every workspace's)" },
  { name: "init", line: "hands init          write a starter AGENTS.md for this project" },
  { name: "memory", line: "hands memory ls|show|search|stats|export   inspect memory" },
  { name: "trust", line: "hands trust [DIR]   let DIR's .hands/ settings apply in full (--list)" },
  { name: "untrust", line: "hands untrust [DIR] forget a trusted folder" },
  { name: "sandbox", line: "hands sandbox ls|exec|rm|prune|doctor|build-image|…   look after sandboxes" },
  {
    name: "dashboard",
    line: "hands dashboard     a local web app over runs, memory, sandboxes (--port N, --no-open)",
  },
  { name: "serve", line: "hands serve         the E2B-compatible sandbox service (keys, audit)" },
  {
    name: "acp",
    line: "hands acp           an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains)",
  },
  {
    name: "mcp-server",
    line: "hands mcp-server    Hands as an MCP server: a run_task tool (stdio, or --http PORT)",
  },
] as const;

export type CommandName = (typeof COMMAND_LINES)[number]["name"];

export const COMMANDS_SECTION = `Commands (each answers --help):\n${COMMAND_LINES.map((c) => `  ${c.line}`).join("\n")}`;
