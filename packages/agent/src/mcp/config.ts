// The `mcpServers` settings: one entry per server, checked strictly so that a misspelled key
// ("timeoutMS", "arg") is an error at start-up instead of a setting that silently does nothing.

export interface McpServerConfig {
  /** stdio: the program to start, with its arguments. */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Streamable HTTP: the endpoint URL. */
  url?: string;
  headers?: Record<string, string>;
  /** Leave this server out. */
  disabled?: boolean;
  /** How long one tool call may take before it is cancelled (default 60 s). */
  timeoutMs?: number;
  /** How long the server may take to answer `initialize` and list its tools (default 15 s). */
  startupTimeoutMs?: number;
  /** How many times a stdio server that stops is started again (default 3; 0: never). */
  maxRestarts?: number;
}

export const MCP_DEFAULTS = { timeoutMs: 60_000, startupTimeoutMs: 15_000, maxRestarts: 3 } as const;

const KEYS = new Set([
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "disabled",
  "timeoutMs",
  "startupTimeoutMs",
  "maxRestarts",
  // Written by other clients' config formats; checked against command/url below.
  "type",
]);

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const isStringRecord = (v: unknown) => isRecord(v) && Object.values(v).every((x) => typeof x === "string");

export function parseMcpServers(value: unknown): Record<string, McpServerConfig> {
  if (value === undefined) return {};
  if (!isRecord(value))
    throw new Error('"mcpServers" must be an object: {"name": {"command": …} | {"url": …}}');
  const out: Record<string, McpServerConfig> = {};
  for (const [name, cfg] of Object.entries(value)) {
    const where = `mcpServers.${name}`;
    if (!isRecord(cfg) || (!cfg.command && !cfg.url) || (cfg.command && cfg.url))
      throw new Error(`${where}: give either "command" (stdio) or "url" (streamable HTTP)`);
    for (const key of Object.keys(cfg))
      if (!KEYS.has(key)) throw new Error(`${where}: unknown key "${key}" (known: ${[...KEYS].join(", ")})`);
    if (cfg.command !== undefined && typeof cfg.command !== "string")
      throw new Error(`${where}.command must be a string`);
    if (cfg.args !== undefined && !(Array.isArray(cfg.args) && cfg.args.every((a) => typeof a === "string")))
      throw new Error(`${where}.args must be an array of strings`);
    for (const key of ["env", "headers"] as const)
      if (cfg[key] !== undefined && !isStringRecord(cfg[key]))
        throw new Error(`${where}.${key} must be an object of strings`);
    for (const key of ["cwd", "url"] as const)
      if (cfg[key] !== undefined && typeof cfg[key] !== "string")
        throw new Error(`${where}.${key} must be a string`);
    if (cfg.url !== undefined && !URL.canParse(cfg.url as string))
      throw new Error(`${where}.url is not a URL: ${cfg.url}`);
    for (const key of ["timeoutMs", "startupTimeoutMs"] as const) {
      const v = cfg[key];
      if (v !== undefined && !(Number.isInteger(v) && (v as number) > 0))
        throw new Error(`${where}.${key} must be a whole number of milliseconds above 0`);
    }
    const restarts = cfg.maxRestarts;
    if (restarts !== undefined && !(Number.isInteger(restarts) && (restarts as number) >= 0))
      throw new Error(`${where}.maxRestarts must be a whole number, 0 or more`);
    const type = cfg.type;
    if (
      type !== undefined &&
      !(cfg.command ? type === "stdio" : type === "http" || type === "streamable-http")
    )
      throw new Error(
        `${where}.type "${String(type)}" does not fit ${cfg.command ? '"command" (use "stdio")' : '"url" (use "http")'}`,
      );
    if (cfg.disabled !== undefined && typeof cfg.disabled !== "boolean")
      throw new Error(`${where}.disabled must be true or false`);
    if (!cfg.disabled) {
      const { type: _type, ...rest } = cfg;
      out[name] = rest as McpServerConfig;
    }
  }
  return out;
}
