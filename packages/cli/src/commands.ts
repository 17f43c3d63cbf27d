// The subcommands of `hands`, by name: what runs each, and its help. Every one answers `-h` /
// `--help` (before a `--`) with its own help — or its command's (`hands memory show --help`) —
// and does nothing else: the check comes before any of them is loaded.
import {
  type CommandName,
  INIT_HELP,
  MEMORY_COMMANDS,
  MEMORY_HELP,
  memoryCommandHelp,
  SANDBOX_COMMANDS,
  SANDBOX_HELP,
  SESSIONS_HELP,
  sandboxCommandHelp,
} from "./command-help.js";

export interface Command {
  /** Its own commands (`hands memory show`), each with a help of its own. */
  subcommands: readonly string[];
  /** The help of the command, or of its command `sub`. */
  help(sub: string | undefined): Promise<string>;
  /** Runs it with the arguments after its name; resolves with the exit code. */
  run(argv: string[], dataDir: () => string): Promise<number>;
}

const out = (s: string) => process.stdout.write(s);

export const COMMANDS: Record<CommandName, Command> = {
  sessions: {
    subcommands: [],
    help: async () => SESSIONS_HELP,
    run: async (argv) => (await import("./sessions-command.js")).runSessionsCommand(argv, out),
  },
  init: {
    subcommands: [],
    help: async () => INIT_HELP,
    run: async (argv) => (await import("./interactive/subcommands.js")).runSubcommand("init", argv),
  },
  memory: {
    subcommands: MEMORY_COMMANDS.map((c) => c.name),
    help: async (sub) => memoryCommandHelp(sub) ?? MEMORY_HELP,
    run: async (argv) => (await import("./memory-command.js")).runMemoryCommand(argv, out),
  },
  trust: {
    subcommands: [],
    help: async () => (await import("./trust-command.js")).TRUST_HELP,
    run: async (argv) => (await import("./trust-command.js")).runTrustCommand("trust", argv, out),
  },
  untrust: {
    subcommands: [],
    help: async () => (await import("./trust-command.js")).TRUST_HELP,
    run: async (argv) => (await import("./trust-command.js")).runTrustCommand("untrust", argv, out),
  },
  sandbox: {
    subcommands: SANDBOX_COMMANDS.map((c) => c.name),
    help: async (sub) => sandboxCommandHelp(sub) ?? SANDBOX_HELP,
    run: async (argv) => (await import("./sandbox-command.js")).runSandboxCommand(argv),
  },
  dashboard: {
    subcommands: [],
    help: async () => (await import("@hands/dashboard")).DASHBOARD_HELP,
    run: async (argv, dataDir) => {
      const m = await import("@hands/dashboard");
      return m.runDashboardCommand(argv, { dataDir: dataDir() }).catch((e: unknown) => {
        if (!(e instanceof m.DashboardUsageError)) throw e;
        process.stderr.write(`hands dashboard: ${e.message}\n`);
        return 2;
      });
    },
  },
  serve: {
    subcommands: ["keys", "audit"],
    help: async () => (await import("@hands/serve")).SERVE_HELP,
    run: async (argv) => (await import("@hands/serve")).runServeCommand(argv),
  },
  acp: {
    subcommands: [],
    help: async () => (await import("./acp/command.js")).ACP_HELP,
    run: async (argv) => (await import("./acp/command.js")).runAcpCommand(argv),
  },
  "mcp-server": {
    subcommands: [],
    help: async () => (await import("./mcp-server/command.js")).MCP_SERVER_HELP,
    run: async (argv) => (await import("./mcp-server/command.js")).runMcpServerCommand(argv),
  },
};

export function commandNamed(name: string | undefined): Command | undefined {
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name as CommandName] : undefined;
}

/** Whether `argv` asks for help: `-h` or `--help` before any `--` (after it, they are a command's). */
export function asksForHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === "--") return false;
    if (a === "-h" || a === "--help") return true;
  }
  return false;
}

/** The help `hands NAME argv…` asks for, if it asks for one. */
export async function helpAskedFor(name: string, argv: readonly string[]): Promise<string | undefined> {
  const command = commandNamed(name);
  if (!command || !asksForHelp(argv)) return undefined;
  const sub = argv[0] !== undefined && command.subcommands.includes(argv[0]) ? argv[0] : undefined;
  return command.help(sub);
}
