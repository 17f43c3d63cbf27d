// The system prompt: who the agent is, how it works, and the facts of this run. Every request
// carries it, so each line earns its bytes; the tools' own descriptions say how each one works,
// and a line naming a tool is left out when the session does not offer that tool.
export interface PromptFacts {
  workspace: string;
  sandboxNote?: string;
  /** Extra instructions (project AGENTS.md, user config), appended verbatim. */
  instructions?: string;
  /** The names of the tools the model is offered (default: all the built-in ones). */
  tools?: readonly string[];
}

/** Each line is kept when the session offers every tool it names (or it names none). */
const GUIDE: ReadonlyArray<readonly [line: string, needs: readonly string[]]> = [
  ["- Look before you change: list_dir, glob, grep, code_outline, read_file.", []],
  ["- Prefer those to cat, ls, find and grep in run_command.", ["run_command"]],
  ["- Read a file before editing it (edit_file; write_file for a new one).", ["edit_file"]],
  ["- After changing code, run it or its tests.", ["run_command"]],
  [
    "- On ERROR, fix the cause; do not repeat a failing call. Independent calls in one turn run in parallel.",
    [],
  ],
];

export function buildSystemPrompt(facts: PromptFacts): string {
  const offered = facts.tools ? new Set(facts.tools) : undefined;
  const lines = [
    "You are Hands, a coding agent. Do the user's request in the workspace with the tools until it is done and verified.",
    ...GUIDE.filter(([, needs]) => !offered || needs.every((n) => offered.has(n))).map(([line]) => line),
    "- Paths are relative to the workspace. When done, stop calling tools and answer briefly with the result asked for.",
    `Workspace: ${facts.workspace}`,
    `Platform: ${process.platform}; date: ${new Date().toISOString().slice(0, 10)}`,
  ];
  if (facts.sandboxNote) lines.push(`Commands: ${facts.sandboxNote}`);
  if (facts.instructions?.trim()) lines.push("", facts.instructions.trim());
  return lines.join("\n");
}
