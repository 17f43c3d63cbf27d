// Reads what TraceWriter writes: a JSONL file of AgentEvents. A trace may be cut mid-line (the
// run is still writing, or was killed), hold lines this version does not know (an older or
// newer Hands), or not be a trace at all; each of those is reported as a problem next to the
// events that could be read, never thrown.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { AgentEvent, AgentEventType, MessageIdRanges } from "./events.js";
import type { TraceMessage } from "./trace.js";

export interface TraceProblem {
  /** 1-based line number in the file. */
  line: number;
  kind: "torn" | "invalid_json" | "unknown_type" | "missing_fields";
  message: string;
}

export interface TraceRead {
  events: AgentEvent[];
  /** The messages model requests sent, each once (model_request's `sent` refers to their ids). */
  messages: TraceMessage[];
  problems: TraceProblem[];
  /** Bytes consumed: a follower continues from here (a torn last line is not consumed). */
  offset: number;
  /** Lines read so far (the next line's number is lines + 1). */
  lines: number;
}

/** The fields each event type must have to be shown (the rest are optional or newer). */
const REQUIRED: Record<Exclude<AgentEventType, "text_delta" | "thinking_delta" | "tool_output">, string[]> = {
  run_start: ["runId", "task"],
  model_request: ["step"],
  thinking: ["step", "text"],
  model_notice: ["step", "message"],
  model_retry: ["step", "attempt", "error"],
  model_response: ["step", "content", "toolCalls", "usage"],
  correction: ["step", "text"],
  tool_start: ["step", "callId", "name"],
  approval: ["step", "callId", "allow"],
  tool_end: ["step", "callId", "name", "output"],
  memory: ["step", "action", "chunkId"],
  model_choice: ["step", "model", "role"],
  subagent_start: ["step", "callId", "runId"],
  subagent_end: ["step", "callId", "runId", "status"],
  hook: ["event", "hook", "outcome"],
  plan: ["items"],
  result: ["status", "steps", "usage"],
};

const ROLES = new Set(["system", "user", "assistant", "tool"]);

/**
 * Checks a `message` line: a numbered message with a role and text content — or a tool result
 * whose text is its call's latest tool_end output (`outputs`), put back here.
 */
function checkTraceMessage(
  v: Record<string, unknown>,
  outputs: Map<string, string>,
): { ok: TraceMessage } | Omit<TraceProblem, "line"> {
  const m = v.message as Record<string, unknown> | null | undefined;
  const ok =
    typeof v.time === "number" &&
    Number.isInteger(v.id) &&
    typeof m === "object" &&
    m !== null &&
    ROLES.has(m.role as string);
  if (!ok) return { kind: "missing_fields", message: "a message line without its id or role" };
  if (v.contentOf === "tool_end" && m.role === "tool" && typeof m.toolCallId === "string") {
    const output = outputs.get(m.toolCallId);
    if (output === undefined)
      return { kind: "missing_fields", message: "a tool result whose tool_end line is missing" };
    const { contentOf: _c, contentAfter, ...line } = v;
    const after = typeof contentAfter === "string" ? contentAfter : "";
    return { ok: { ...line, message: { ...m, content: output + after } } as unknown as TraceMessage };
  }
  if (typeof m.content !== "string")
    return { kind: "missing_fields", message: "a message line without its content" };
  return { ok: v as unknown as TraceMessage };
}

/** Checks one parsed line: an event this version can show, or why not. */
export function checkTraceEvent(value: unknown): { event: AgentEvent } | Omit<TraceProblem, "line"> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { kind: "invalid_json", message: "the line is not a JSON object" };
  const v = value as Record<string, unknown>;
  const type = v.type;
  if (typeof type !== "string") return { kind: "unknown_type", message: "the line has no event type" };
  const required = (REQUIRED as Record<string, string[] | undefined>)[type];
  if (!required)
    return {
      kind: "unknown_type",
      message: `unknown event type "${type.slice(0, 40)}" (written by another version of Hands?)`,
    };
  const missing = required.filter((f) => v[f] === undefined);
  if (typeof v.time !== "number") missing.unshift("time");
  if (missing.length)
    return {
      kind: "missing_fields",
      message: `${type} without ${missing.join(", ")} (written by another version of Hands?)`,
    };
  // What a request sent, when recorded: ranges of message ids. A malformed list is dropped, so
  // the request shows as not recorded rather than pointing at the wrong messages.
  if (type === "model_request" && v.sent !== undefined && !validRanges(v.sent)) {
    const { sent: _bad, ...rest } = v;
    return { event: rest as unknown as AgentEvent };
  }
  return { event: v as unknown as AgentEvent };
}

function validRanges(value: unknown): value is MessageIdRanges {
  return (
    Array.isArray(value) &&
    value.every(
      (r) =>
        Array.isArray(r) &&
        r.length === 2 &&
        Number.isInteger(r[0]) &&
        Number.isInteger(r[1]) &&
        r[0] >= 1 &&
        r[1] >= r[0],
    )
  );
}

/** The message ids of `ranges`, in order; at most `max` of them. */
export function expandRanges(ranges: MessageIdRanges, max = 100_000): number[] {
  const ids: number[] = [];
  for (const [a, b] of ranges) for (let id = a; id <= b && ids.length < max; id++) ids.push(id);
  return ids;
}

/**
 * Parses trace text. With `final` false (a file still being written) an unterminated last line
 * is left for later; with `final` true it is reported as torn.
 */
export function parseTrace(
  text: string,
  options: {
    final?: boolean;
    firstLine?: number;
    /** What the lines so far left to know (a follower passes its own to carry on). */
    state?: TraceReadState;
  } = {},
): TraceRead {
  const state = options.state ?? newTraceReadState();
  const outputs = state.outputs;
  const events: AgentEvent[] = [];
  const messages: TraceMessage[] = [];
  const problems: TraceProblem[] = [];
  let line = (options.firstLine ?? 1) - 1;
  let pos = 0;
  let offset = 0;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    const complete = nl !== -1;
    if (!complete && !options.final) break;
    const raw = text.slice(pos, complete ? nl : text.length);
    line++;
    pos = complete ? nl + 1 : text.length;
    offset += Buffer.byteLength(raw, "utf8") + (complete ? 1 : 0);
    if (!raw.trim()) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      problems.push(
        complete
          ? { line, kind: "invalid_json", message: `line ${line} is not valid JSON` }
          : {
              line,
              kind: "torn",
              message: `line ${line} was cut off (the run was killed or is still writing)`,
            },
      );
      continue;
    }
    if ((parsed as { type?: unknown } | null)?.type === "message") {
      const checked = checkTraceMessage(parsed as Record<string, unknown>, outputs);
      if ("ok" in checked) messages.push(renumber(checked.ok, state));
      else problems.push({ line, ...checked });
      continue;
    }
    const checked = checkTraceEvent(parsed);
    if ("event" in checked) {
      const e = checked.event;
      if (e.type === "model_request" && e.sent && state.base > 0)
        events.push({
          ...e,
          sent: e.sent.map(([a, b]): [number, number] => [a + state.base, b + state.base]),
        });
      else events.push(e);
      if (checked.event.type === "tool_end" && typeof checked.event.output === "string")
        outputs.set(checked.event.callId, checked.event.output);
    } else problems.push({ line, ...checked });
  }
  return { events, messages, problems, offset, lines: line };
}

/**
 * What reading a trace carries from line to line: each call's latest tool_end output, and the
 * message numbering. Each TraceWriter numbers from 1, and a resumed session appends a second
 * writer's lines to the same file; its ids restart (a message id not above the previous one),
 * so the reader shifts them past those already seen and keeps every id unique in the file.
 */
export interface TraceReadState {
  outputs: Map<string, string>;
  /** Added to the current writer's ids. */
  base: number;
  /** The current writer's last id as written, and the highest id given out so far. */
  last: number;
  max: number;
}

export function newTraceReadState(): TraceReadState {
  return { outputs: new Map(), base: 0, last: 0, max: 0 };
}

function renumber(m: TraceMessage, state: TraceReadState): TraceMessage {
  if (m.id <= state.last) state.base = state.max;
  state.last = m.id;
  const id = m.id + state.base;
  state.max = Math.max(state.max, id);
  return id === m.id ? m : { ...m, id };
}

/** Bytes from `offset` to the end of the file at `path`, or undefined when it is not a regular file. */
function readFrom(
  path: string,
  offset: number,
  maxBytes: number,
): { text: string; size: number } | undefined {
  // O_NONBLOCK: a FIFO planted under a trace's name must not hang the reader.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const length = Math.max(0, Math.min(st.size - offset, maxBytes));
    const buf = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    // Only whole UTF-8 characters: stop before a multi-byte sequence cut by the end of the read.
    let end = got;
    let back = end - 1;
    while (back >= 0 && back >= end - 4 && (buf[back]! & 0xc0) === 0x80) back--;
    if (back >= 0 && buf[back]! >= 0xc0) {
      const need = buf[back]! >= 0xf0 ? 4 : buf[back]! >= 0xe0 ? 3 : 2;
      if (end - back < need) end = back;
    }
    return { text: buf.subarray(0, end).toString("utf8"), size: st.size };
  } finally {
    closeSync(fd);
  }
}

export class NotATraceFileError extends Error {}

/** Reads a whole trace file (a torn last line is reported). Throws NotATraceFileError for a non-file. */
export function readTrace(path: string, maxBytes = 512 * 1024 * 1024): TraceRead {
  const r = readFrom(path, 0, maxBytes);
  if (!r) throw new NotATraceFileError(`${path} is not a regular file`);
  return parseTrace(r.text, { final: true });
}

/**
 * Follows a trace that is being written: each `poll()` returns the events appended since the
 * last one (whole lines only; a line being written is picked up once its newline is there).
 */
export class TraceFollower {
  private lines = 0;
  private state = newTraceReadState();
  private primed: boolean;
  constructor(
    readonly path: string,
    public offset = 0,
  ) {
    this.primed = offset === 0;
  }

  /**
   * Starting mid-file (where a whole read stopped): the lines before `offset` are read once for
   * what later lines refer back to (tool outputs, message numbering) and for line numbers.
   */
  private prime(): void {
    this.primed = true;
    const r = readFrom(this.path, 0, this.offset);
    if (!r) throw new NotATraceFileError(`${this.path} is not a regular file`);
    const before = parseTrace(r.text, { state: this.state });
    this.lines = before.lines;
  }

  poll(): { events: AgentEvent[]; messages: TraceMessage[]; problems: TraceProblem[] } {
    if (!this.primed) this.prime();
    const r = readFrom(this.path, this.offset, 64 * 1024 * 1024);
    if (!r) throw new NotATraceFileError(`${this.path} is not a regular file`);
    if (r.size < this.offset) {
      // Replaced by a shorter file: start over.
      this.offset = 0;
      this.lines = 0;
      this.state = newTraceReadState();
      return this.poll();
    }
    const parsed = parseTrace(r.text, { firstLine: this.lines + 1, state: this.state });
    this.offset += parsed.offset;
    this.lines = parsed.lines;
    return { events: parsed.events, messages: parsed.messages, problems: parsed.problems };
  }
}
