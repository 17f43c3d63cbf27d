// Stand-ins: the short form a chunk is shown in when its full text does not earn its tokens.
// Each is made of whole units a model can use — whole sentences, or structured summary lines —
// chosen by what the content is (001 §4.3): source code → its outline (signatures with line
// numbers); command output → exit code, error lines and the tail; a test run → the failing
// tests and their messages; grep / glob → the files and counts; a conversation turn → the
// speaker and the sentence with the entities and numbers. No stand-in is a bag of words: when
// no useful unit fits, the chunk has none (it is shown in full or not at all).
import { density, estimateTokens, sentences } from "./text.js";
import type { Chunk } from "./types.js";

/** A symbol of a source file's outline, as a parser gives it (lines 1-based). */
export interface OutlineLine {
  signature: string;
  startLine: number;
  endLine: number;
  /** Nesting depth (0: top level). */
  depth: number;
}

/**
 * The outline of a source file, or undefined when its language is not supported. Injected by
 * the caller (the agent's tree-sitter outline library): memory does not depend on the agent.
 */
export type Outliner = (source: string, path: string) => Promise<OutlineLine[] | undefined>;

export interface StandInOptions {
  /** The most a stand-in takes, in tokens, for prose. */
  maxTokens: number;
  /** Size of a prose stand-in against the chunk. */
  ratio: number;
  outline?: Outliner;
}

type Source = Pick<Chunk, "content" | "tokens" | "type" | "meta">;

/** Structured stand-ins (outline, failures, files) may run to this many tokens. */
const STRUCTURED_MAX = 160;
/** Below this share of the chunk a stand-in is worth having at all. */
const WORTH = 0.6;

export async function makeStandIn(c: Source, o: StandInOptions): Promise<string | undefined> {
  const made = await pick(c, o);
  if (!made) return undefined;
  const t = estimateTokens(made);
  return t >= 4 && t <= c.tokens * WORTH ? made : undefined;
}

async function pick(c: Source, o: StandInOptions): Promise<string | undefined> {
  if (c.meta.speaker) return turnStandIn(c.content, c.meta.speaker);
  if (c.type === "tool_result") {
    const tool = c.meta.tool ?? "";
    if (tool === "grep" || tool === "glob") return filesStandIn(c.content);
    if (c.meta.path && tool === "read_file") {
      const outlined = o.outline ? await codeStandIn(c.content, c.meta.path, o.outline) : undefined;
      if (outlined) return outlined;
    }
    if (isTestRun(c.content)) return testStandIn(c.content);
    if (/^exit code:/m.test(c.content.slice(0, 200)) || tool === "run_command" || tool === "execute_python")
      return commandStandIn(c.content);
  }
  if (c.tokens <= 40) return undefined;
  return sentenceSummary(c.content, Math.min(o.maxTokens, Math.max(12, Math.floor(c.tokens * o.ratio))));
}

/** The turn's most informative whole sentence (entities, numbers, dates), after the speaker. */
export function turnStandIn(content: string, speaker: string): string | undefined {
  const body = content.startsWith(`${speaker}:`) ? content.slice(speaker.length + 1).trim() : content;
  const sents = sentences(body).filter((s) => s.split(/\s+/).length >= 4);
  if (sents.length < 2) return undefined;
  let best = sents[0]!;
  let bestScore = -1;
  for (const s of sents) {
    const d = density(s);
    const score = d.entities + d.numbers * 1.5 + d.identifiers + d.paths * 2 + s.length / 200;
    if (score > bestScore) {
      best = s;
      bestScore = score;
    }
  }
  return `${speaker}: ${best}`;
}

/** Whole sentences (or lines) with the most information, in their order, within `maxTokens`. */
export function sentenceSummary(text: string, maxTokens: number): string | undefined {
  const sents = sentences(text);
  const scored = sents.map((s, i) => {
    const d = density(s);
    const edge = i === 0 || i === sents.length - 1 ? 0.3 : 0;
    return { i, s, t: estimateTokens(s) + 1, score: d.score + edge + (d.signals > 0 ? 0.3 : 0) };
  });
  const chosen: typeof scored = [];
  let used = 0;
  for (const c of [...scored].sort((a, b) => b.score - a.score || a.i - b.i)) {
    if (c.s.split(/\s+/).length < 3 || used + c.t > maxTokens) continue;
    chosen.push(c);
    used += c.t;
  }
  if (chosen.length === 0) return undefined;
  chosen.sort((a, b) => a.i - b.i);
  return chosen.map((c) => c.s).join(" … ");
}

/** Lines within a token cap, whole; a count of what was left out closes it. */
function capLines(lines: string[], max = STRUCTURED_MAX): string {
  const out: string[] = [];
  let used = 0;
  for (const [k, l] of lines.entries()) {
    const t = estimateTokens(l) + 1;
    if (used + t > max) {
      out.push(`… ${lines.length - k} more lines`);
      break;
    }
    out.push(l);
    used += t;
  }
  return out.join("\n");
}

const NUMBERED = /^\s*(\d+)\t(.*)$/;

/** read_file output (numbered lines) → its outline, line numbers as in the file. */
async function codeStandIn(content: string, path: string, outline: Outliner): Promise<string | undefined> {
  const raw = content.split("\n");
  const first = NUMBERED.exec(raw[0] ?? "");
  const offset = first ? Number(first[1]) : 1;
  const source = raw
    .filter((l) => NUMBERED.test(l))
    .map((l) => NUMBERED.exec(l)![2]!)
    .join("\n");
  let symbols: OutlineLine[] | undefined;
  try {
    symbols = await outline(first ? source : content, path);
  } catch {
    return undefined; // no outline: the chunk falls back to its other stand-ins
  }
  if (!symbols?.length) return undefined;
  const total = raw.filter((l) => NUMBERED.test(l)).length || raw.length;
  const lines = symbols.map(
    (s) => `${"  ".repeat(s.depth)}${s.signature}  [${s.startLine + offset - 1}-${s.endLine + offset - 1}]`,
  );
  return `${path} (lines ${offset}-${offset + total - 1}), outline:\n${capLines(lines)}`;
}

const TEST_SUMMARY =
  /\b\d+ (?:passed|failed|passing|failing)\b|^(?:Tests?|# (?:pass|fail)|Ran \d+ tests?)\b|\b(?:FAILED|PASSED) \(|^(?:FAIL|PASS|ok|not ok)\b/m;
const FAIL_LINE =
  /(?:^|\s)(?:✗|✖|×|FAIL(?:ED)?\b|not ok\b|ERROR\b|Error:|AssertionError|assert(?:ion)?\w* failed|expected\b.*\b(?:got|received|to (?:be|equal))\b)/i;

function isTestRun(content: string): boolean {
  return TEST_SUMMARY.test(content);
}

/** A test run → the command, the failing tests with the line after each (the message), the summary. */
function testStandIn(content: string): string {
  const lines = content.split("\n");
  const keep = new Set<number>([0]);
  for (const [i, l] of lines.entries())
    if (FAIL_LINE.test(l)) {
      keep.add(i);
      if (lines[i + 1]?.trim() && !FAIL_LINE.test(lines[i + 1]!)) keep.add(i + 1);
    }
  for (const [i, l] of lines.entries()) if (TEST_SUMMARY.test(l) && i > lines.length - 8) keep.add(i);
  const failing = [...keep].filter((i) => i > 0 && FAIL_LINE.test(lines[i]!)).length;
  const body = [...keep].sort((a, b) => a - b).map((i) => lines[i]!.trimEnd());
  return capLines([`${failing} failing line${failing === 1 ? "" : "s"} of ${lines.length}:`, ...body]);
}

/** Command output → the exit code line, the error lines and the last lines, in order, gaps marked. */
function commandStandIn(content: string): string {
  const lines = content.split("\n").filter((l) => l.trim());
  const keep = new Set<number>();
  const exit = lines.findIndex((l) => /^exit code:/.test(l));
  if (exit >= 0) keep.add(exit);
  let errors = 0;
  for (const [i, l] of lines.entries())
    if (
      errors < 8 &&
      (FAIL_LINE.test(l) || /\b(?:warning|fatal|panic|traceback|denied|not found)\b/i.test(l))
    ) {
      keep.add(i);
      errors++;
    }
  for (let i = Math.max(0, lines.length - 3); i < lines.length; i++) keep.add(i);
  const out: string[] = [];
  let prev = -1;
  for (const i of [...keep].sort((a, b) => a - b)) {
    if (i > prev + 1) out.push("…");
    const l = lines[i]!;
    out.push(l.length > 200 ? `${l.slice(0, 200)}…` : l);
    prev = i;
  }
  return capLines(out);
}

/** grep / glob output → each file with its number of matching lines, and the totals line. */
function filesStandIn(content: string): string | undefined {
  const counts = new Map<string, number>();
  const other: string[] = [];
  for (const l of content.split("\n")) {
    const m = /^([^\s:][^:]*?):(\d+):/.exec(l);
    if (m) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
    else if (/^[\w./@-][^\s]*$/.test(l.trim()) && l.trim()) counts.set(l.trim(), 0);
    else if (l.trim()) other.push(l.trim());
  }
  if (counts.size === 0) return undefined;
  const lines = [...counts].map(([f, n]) => (n ? `${f}: ${n} match${n === 1 ? "" : "es"}` : f));
  return capLines([`${counts.size} files:`, ...lines, ...other.slice(-2)]);
}
