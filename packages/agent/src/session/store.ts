// Sessions on disk: one JSONL file per session, appended line by line with synchronous writes,
// so a session killed at any moment (even SIGKILL) keeps every line written before. Loading
// tolerates a torn last line and repairs a step whose tool results were never written.
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Message, ToolMessage, Usage } from "@hands/llm";
import { addUsage, emptyUsage } from "../usage.js";

export interface SessionMeta {
  id: string;
  workspace: string;
  created: number;
  provider?: string;
  model?: string;
}

export type SessionLine =
  | ({ type: "session" } & SessionMeta)
  | { type: "message"; time: number; message: Message }
  | { type: "usage"; time: number; usage: Usage }
  | { type: "turn"; time: number; status: string; steps: number }
  /** The conversation was summarised: these messages replace everything before. */
  | { type: "compact"; time: number; messages: Message[] }
  /** The session's model, provider and approval mode from here on (a resume restores them). */
  | { type: "settings"; time: number; provider?: string; model?: string; approval?: string };

export interface LoadedSession {
  meta: SessionMeta;
  messages: Message[];
  usage: Usage;
  /** The latest model, provider and approval mode recorded (the meta's model and provider before any). */
  settings: { provider?: string; model?: string; approval?: string };
  /** The usage of the last model call: its input tokens are how full the context was. */
  lastUsage?: Usage;
  steps: number;
  updated: number;
}

export interface SessionSummary extends SessionMeta {
  firstRequest: string;
  updated: number;
  steps: number;
  costUsd: number;
  tokens: number;
  path: string;
}

export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

export class SessionStore {
  constructor(readonly dir: string) {}

  pathOf(id: string): string {
    if (!/^[\w.-]+$/.test(id)) throw new Error(`invalid session id: ${id}`);
    return join(this.dir, `${id}.jsonl`);
  }

  create(meta: Omit<SessionMeta, "id" | "created"> & { id?: string }): SessionWriter {
    const full: SessionMeta = { ...meta, id: meta.id ?? newSessionId(), created: Date.now() };
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const w = new SessionWriter(this.pathOf(full.id), full);
    w.append({ type: "session", ...full });
    return w;
  }

  /** Reopens a session for appending (after load). */
  reopen(meta: SessionMeta): SessionWriter {
    return new SessionWriter(this.pathOf(meta.id), meta);
  }

  load(id: string): LoadedSession {
    const path = this.pathOf(id);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      throw new Error(`no session ${id} (looked for ${path})`);
    }
    return parseSession(text, statSync(path).mtimeMs);
  }

  list(): SessionSummary[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith(".jsonl"));
    } catch {
      return [];
    }
    const out: SessionSummary[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      try {
        const s = parseSession(readFileSync(path, "utf8"), statSync(path).mtimeMs);
        const first = s.messages.find((m) => m.role === "user");
        out.push({
          ...s.meta,
          firstRequest: first?.content ?? "",
          updated: s.updated,
          steps: s.steps,
          costUsd: s.usage.costUsd ?? 0,
          tokens: s.usage.inputTokens + s.usage.outputTokens,
          path,
        });
      } catch {
        // An unreadable file is not a session; skip it.
      }
    }
    return out.sort((a, b) => b.updated - a.updated);
  }

  /** The most recently used session in this workspace. */
  latest(workspace: string): SessionSummary | undefined {
    return this.list().find((s) => s.workspace === workspace);
  }
}

export class SessionWriter {
  private fd: number | undefined;
  constructor(
    readonly path: string,
    readonly meta: SessionMeta,
  ) {
    this.fd = openSync(path, "a", 0o600);
  }

  append(line: SessionLine): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  message(message: Message): void {
    this.append({ type: "message", time: Date.now(), message });
  }

  usage(usage: Usage): void {
    this.append({ type: "usage", time: Date.now(), usage });
  }

  turn(status: string, steps: number): void {
    this.append({ type: "turn", time: Date.now(), status, steps });
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

export function parseSession(text: string, mtime = Date.now()): LoadedSession {
  let meta: SessionMeta | undefined;
  const messages: Message[] = [];
  const usage = emptyUsage();
  let lastUsage: Usage | undefined;
  let settings: LoadedSession["settings"] = {};
  let updated = mtime;
  const lines = text.split("\n");
  for (const raw of lines) {
    if (!raw.trim()) continue;
    let line: SessionLine;
    try {
      line = JSON.parse(raw) as SessionLine;
    } catch {
      continue; // a line torn by a crash
    }
    if (line.type === "session")
      meta = {
        id: line.id,
        workspace: line.workspace,
        created: line.created,
        ...(line.provider ? { provider: line.provider } : {}),
        ...(line.model ? { model: line.model } : {}),
      };
    else if (line.type === "message") messages.push(line.message);
    else if (line.type === "usage") {
      addUsage(usage, line.usage);
      lastUsage = line.usage;
    } else if (line.type === "settings") {
      const { type: _t, time: _time, ...rest } = line;
      settings = { ...settings, ...rest };
    } else if (line.type === "compact") messages.splice(0, messages.length, ...line.messages);
    if ("time" in line && typeof line.time === "number") updated = line.time;
  }
  if (!meta) throw new Error("not a session file (no session line)");
  const repaired = repairMessages(messages);
  return {
    meta,
    messages: repaired,
    usage,
    settings: {
      ...(meta.provider ? { provider: meta.provider } : {}),
      ...(meta.model ? { model: meta.model } : {}),
      ...settings,
    },
    ...(lastUsage ? { lastUsage } : {}),
    steps: repaired.filter((m) => m.role === "assistant").length,
    updated,
  };
}

/**
 * An assistant message whose tool calls have no results (the session died while they ran)
 * gets results saying so, so the conversation is valid for every provider.
 */
export function repairMessages(messages: Message[]): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    out.push(m);
    if (m.role !== "assistant" || !m.toolCalls?.length) continue;
    const answered = new Set<string>();
    let j = i + 1;
    while (j < messages.length && messages[j]!.role === "tool") {
      answered.add((messages[j] as ToolMessage).toolCallId);
      out.push(messages[j]!);
      j++;
    }
    for (const call of m.toolCalls) {
      if (!answered.has(call.id))
        out.push({
          role: "tool",
          toolCallId: call.id,
          name: call.name,
          content:
            "ERROR: the session stopped before this call finished; its effect is unknown. Check before retrying.",
          isError: true,
        });
    }
    i = j - 1;
  }
  return out;
}
