// Writes a run's events as JSONL, one line per event, synchronously so that a crash loses
// nothing already written. Streaming deltas are left out: responses are recorded whole.
//
// What each model request sent is recorded without repeating the conversation every step:
// each distinct message is written once, as a `message` line with a number, the first time a
// request sends it; the request's line lists the numbers it sent as ranges. Without memory the
// list only grows (one range), so a step costs the new messages only; with memory the context
// is assembled anew each step (stand-ins, recalled notes) and the list says exactly which.
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Message } from "@hands/llm";
import { type AgentEvent, type MessageIdRanges, SENT_MESSAGES } from "./events.js";
import { removeLiveMark, writeLiveMark } from "./trace-live.js";

/** A trace line holding one message a model request sent (written once per trace). */
export interface TraceMessage {
  type: "message";
  time: number;
  /** Numbered from 1 in the order first sent; model_request lines refer to it (`sent`). */
  id: number;
  message: Message;
}

/**
 * A message line as written: a tool result whose text is its call's `tool_end` output (nearly
 * always; sometimes with a note after it) leaves that output out and says so, so the trace does
 * not hold every output twice. The reader puts it back from the latest tool_end of that call
 * before the line.
 */
export type WrittenTraceMessage = Omit<TraceMessage, "message"> & {
  message: Message | (Omit<Message & { role: "tool" }, "content"> & { content?: undefined });
  contentOf?: "tool_end";
  /** With contentOf: text the message has after the output. */
  contentAfter?: string;
};

/** The last request's messages, to see what the next one only appends. */
interface Previous {
  array: readonly Message[];
  length: number;
  first: Message | undefined;
  last: Message | undefined;
  ranges: MessageIdRanges;
}

export class TraceWriter {
  private fd: number | undefined;
  /** Message objects already written, by identity (the loop and memory reuse them). */
  private readonly ids = new WeakMap<Message, number>();
  private nextId = 1;
  private previous: Previous | undefined;
  /** The latest tool_end output of each call, until its tool message is written. */
  private readonly outputs = new Map<string, string>();

  constructor(readonly path: string) {
    // Traces hold prompts, code and command output: private to the user.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.fd = openSync(path, "a", 0o600);
    // The dashboard tells a running run from a crashed one by this mark and the process.
    writeLiveMark(path);
  }

  /** Use as the run's event listener. */
  readonly write = (event: AgentEvent): void => {
    if (
      this.fd === undefined ||
      event.type === "text_delta" ||
      event.type === "thinking_delta" ||
      event.type === "tool_output"
    )
      return;
    if (event.type === "model_request") {
      const sent = event[SENT_MESSAGES];
      if (sent) {
        // One write for the new messages and the request: a crash cannot split them.
        const { lines, ranges } = this.number(sent, event.time);
        writeSync(this.fd, `${lines}${JSON.stringify({ ...event, sent: ranges })}\n`);
        return;
      }
    }
    if (event.type === "tool_end") this.outputs.set(event.callId, event.output);
    else if (event.type === "result") this.outputs.clear();
    writeSync(this.fd, `${JSON.stringify(event)}\n`);
  };

  private messageLine(id: number, time: number, m: Message): string {
    let line: WrittenTraceMessage = { type: "message", time, id, message: m };
    if (m.role === "tool") {
      const output = this.outputs.get(m.toolCallId);
      // The loop may add a note after the output (a call repeated): only the note is written.
      if (output !== undefined && m.content.startsWith(output)) {
        const { content, ...rest } = m;
        line = {
          type: "message",
          time,
          id,
          message: rest,
          contentOf: "tool_end",
          ...(content.length > output.length ? { contentAfter: content.slice(output.length) } : {}),
        };
      }
      this.outputs.delete(m.toolCallId);
    }
    return `${JSON.stringify(line)}\n`;
  }

  /** The ids of `sent` as ranges, and the message lines of those not written before. */
  private number(sent: readonly Message[], time: number): { lines: string; ranges: MessageIdRanges } {
    let lines = "";
    let from = 0;
    let ranges: MessageIdRanges = [];
    const p = this.previous;
    // The loop's own history array, grown by appending since the last request: only the new
    // messages need looking at (the first and last known ones are checked to be still there).
    if (
      p &&
      sent === p.array &&
      sent.length >= p.length &&
      (p.length === 0 || (sent[p.length - 1] === p.last && sent[0] === p.first))
    ) {
      ranges = p.ranges.map(([a, b]): [number, number] => [a, b]);
      from = p.length;
    }
    for (let i = from; i < sent.length; i++) {
      const m = sent[i]!;
      let id = this.ids.get(m);
      if (id === undefined) {
        id = this.nextId++;
        this.ids.set(m, id);
        lines += this.messageLine(id, time, m);
      }
      const last = ranges[ranges.length - 1];
      if (last && last[1] + 1 === id) last[1] = id;
      else ranges.push([id, id]);
    }
    this.previous = { array: sent, length: sent.length, first: sent[0], last: sent[sent.length - 1], ranges };
    return { lines, ranges };
  }

  close(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      removeLiveMark(this.path);
    }
    this.fd = undefined;
  }
}
