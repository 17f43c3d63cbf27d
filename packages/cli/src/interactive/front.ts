// What the session needs from a front end: a view (output) and an input. The terminal front
// end (tui/) is both; a pipe gets the plain SessionView and LineInput.
import type { AgentEvent, TodoItem } from "@hands/agent";
import type { Usage } from "@hands/llm";
import type { Style } from "../render.js";

export interface ToolRecord {
  name: string;
  args: unknown;
  output: string;
  isError: boolean;
}

export interface StatusInfo {
  model: string;
  workspace: string;
  sandbox: string;
  approval: string;
  usage: Usage;
  contextBudget?: number;
  /** Cut to this many columns. */
  width?: number;
}

export interface View {
  readonly style: Style;
  readonly tty: boolean;
  /** Completed tool calls, newest last, for /expand. */
  readonly tools: ToolRecord[];
  /** The model's reasoning per response, newest last, for /thinking. */
  readonly thoughts: string[];
  todos: TodoItem[];
  turnTokens: number;
  contextTokens: number;
  print(text: string): void;
  breakLine(): void;
  startSpinner(label?: string): void;
  stopSpinner(): void;
  onEvent(e: AgentEvent): void;
  statusLine(info: StatusInfo): string;
}

export interface Input {
  readonly tty: boolean;
  /** A line typed in answer to `prompt`, or null at end of input. */
  read(prompt: string): Promise<string | null>;
  /** The next request. */
  readRequest(prompt: string, more: string): Promise<string | null>;
  /** Gives a pending read an empty answer (Ctrl-C during a question). */
  cancelPending(): boolean;
  readonly suspended: boolean;
  /** Hands the terminal to another program (an editor). */
  suspend(): void;
  resume(): void;
  close(): void;
  /** One key out of `keys` (a terminal); undefined: this input reads whole lines instead. */
  choose?(prompt: string, keys: string[]): Promise<string | null>;
}
