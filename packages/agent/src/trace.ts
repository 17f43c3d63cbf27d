// Writes a run's events as JSONL, one line per event, synchronously so that a crash loses
// nothing already written. Streaming deltas are left out: responses are recorded whole.
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { AgentEvent } from "./events.js";

export class TraceWriter {
  private fd: number | undefined;

  constructor(readonly path: string) {
    // Traces hold prompts, code and command output: private to the user.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.fd = openSync(path, "a", 0o600);
  }

  /** Use as the run's event listener. */
  readonly write = (event: AgentEvent): void => {
    if (this.fd === undefined || event.type === "text_delta" || event.type === "thinking_delta") return;
    writeSync(this.fd, `${JSON.stringify(event)}\n`);
  };

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
