// The settings a caller gives directly — the CLI's flags, the SDK's options — which win over
// the environment and the config files. Every field is optional: unset means "not given here".

export interface SettingFlags {
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  /** off | low | medium | high. */
  reasoning?: string;
  maxSteps?: number;
  maxTokens?: number;
  /** Seconds without a byte from the model server before the attempt is retried. */
  idleTimeout?: number;
  sandbox?: string;
  /** sandbox "e2b": the template its sandboxes start from. */
  e2bTemplate?: string;
  /** sandbox docker or bwrap: a local template (hands sandbox template build) to run in. */
  template?: string;
  /** "host" or "none" (the default for isolating sandboxes). */
  network?: string;
  /** Only these domains, through a filtering proxy. */
  allowDomain?: string[];
  /** auto | ask | read-only. */
  approval?: string;
  /** true: on; false: off; undefined: memory's own default (on). */
  memory?: boolean;
  /** false: no language-server diagnostics after edits (--no-diagnostics); undefined: the config's. */
  diagnostics?: boolean;
  contextBudget?: number;
  memorySummaries?: string;
  embeddingsUrl?: string;
  embeddingsModel?: string;
  /** "off": no repository map in the first request (--no-repo-map). */
  repoMap?: string;
  /** Size of the first request's repository map (--repo-map-tokens). */
  repoMapTokens?: number;
  /** Databases for query_database by name (the config's "databases"); given here they add to the config's. */
  databases?: Record<string, unknown>;
  /** Models by role ({ planner, executor, summarizer, subagent, chat, strong, escalateAfter }). */
  models?: Record<string, unknown>;
  /** MCP servers by name (the config's "mcpServers"); given here they replace the config's. */
  mcpServers?: Record<string, unknown>;
}
