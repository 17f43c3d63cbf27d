// Serialises a streamed messages request for Anthropic without re-encoding the history. A
// history only grows (messages never change once appended), so a session's bodies share a
// prefix: the encoder keeps the encoded turns that can no longer change — every turn followed by
// a turn of the other role — and a request re-encodes only the turns after them: the last
// turn (which the next message may merge into, and which carries the cache breakpoint) and what
// is new. Each message's blocks are encoded once (kept by the message's identity). The system
// prompt, the other fields and the tools are put in front and behind at every request. What it
// makes parses to exactly what toAnthropic + withCacheBreakpoints give for the whole history
// (anthropic-body.property.test.ts). A history that does not start with the kept messages
// (compacted, another session) starts the prefix over.
import type { ContentBlockParam } from "@anthropic-ai/sdk/resources/messages/messages";
import { blocksOf, takesCacheControl, turnsOf } from "./anthropic-wire.js";
import type { Message } from "./types.js";

interface EncodedBlock {
  block: ContentBlockParam;
  bytes: Buffer;
  toolResult: boolean;
}

type Turn = { role: "user" | "assistant"; blocks: EncodedBlock[] };
type Said = Exclude<Message, { role: "system" }>;

const EPHEMERAL = { type: "ephemeral" as const };
const COMMA = Buffer.from(",");
const CLOSE_TURN = Buffer.from("]}");
const TURN = {
  user: Buffer.from('{"role":"user","content":['),
  assistant: Buffer.from('{"role":"assistant","content":['),
};

export class AnthropicBodyEncoder {
  private readonly blocks = new WeakMap<Message, EncodedBlock[]>();
  /** The non-system messages whose turns are in `prefix`, in order. */
  private kept: Said[] = [];
  /** Their turns, encoded and joined by commas: bytes [0, prefixLength) of `prefix`. */
  private prefix = Buffer.alloc(0);
  private prefixLength = 0;
  private toolsKey: unknown;
  private toolsBytes = Buffer.alloc(0);

  /**
   * `fields` are the other top-level parameters (model, max_tokens, stream, thinking, …); the
   * encoded `tools` are kept by the identity of `tools.key` and encoded again for another key.
   */
  encode(
    fields: Record<string, unknown>,
    messages: readonly Message[],
    tools?: { key: unknown; wire: () => unknown },
  ): Buffer {
    const system: string[] = [];
    const rest: Said[] = [];
    for (const m of messages) {
      if (m.role === "system") system.push(m.content);
      else rest.push(m);
    }
    if (!this.extends(rest)) {
      this.kept = [];
      this.prefixLength = 0;
    }
    const { turns } = turnsOf(
      rest.slice(this.kept.length),
      (m) => this.encoded(m),
      (b) => b.toolResult,
    );
    // Every new turn but the last is final now; so are their messages.
    const final = turns.slice(0, -1);
    if (final.length > 0) {
      const bytes = Buffer.concat(
        final.flatMap((t, i) => [
          ...(i > 0 || this.prefixLength > 0 ? [COMMA] : []),
          ...turnPieces(t, false),
        ]),
      );
      this.append(bytes);
      let count = 0;
      for (const t of final) count += t.blocks.length;
      this.keep(rest, count);
    }
    const last = turns[turns.length - 1];
    const fieldsJson = JSON.stringify(fields);
    const systemText = system.join("\n\n");
    const head =
      (fieldsJson.length > 2 ? `${fieldsJson.slice(0, -1)},` : "{") +
      (systemText
        ? `"system":${JSON.stringify([{ type: "text", text: systemText, cache_control: EPHEMERAL }])},`
        : "") +
      '"messages":[';
    const pieces: Buffer[] = [Buffer.from(head), this.prefix.subarray(0, this.prefixLength)];
    if (last) {
      if (this.prefixLength > 0) pieces.push(COMMA);
      pieces.push(...turnPieces(last, true));
    }
    pieces.push(Buffer.from("]"));
    if (tools) {
      if (tools.key !== this.toolsKey) {
        this.toolsKey = tools.key;
        this.toolsBytes = Buffer.from(`,"tools":${JSON.stringify(tools.wire())}`);
      }
      pieces.push(this.toolsBytes);
    }
    pieces.push(Buffer.from("}"));
    return Buffer.concat(pieces);
  }

  /** Whether `rest` starts with the kept messages (compared by identity). */
  private extends(rest: readonly Said[]): boolean {
    if (rest.length < this.kept.length) return false;
    for (let i = 0; i < this.kept.length; i++) if (rest[i] !== this.kept[i]) return false;
    return true;
  }

  /** Marks as kept the messages after the kept ones whose blocks make `blocks` blocks. */
  private keep(rest: readonly Said[], blocks: number): void {
    let i = this.kept.length;
    while (blocks > 0 && i < rest.length) {
      const m = rest[i++]!;
      blocks -= this.encoded(m).length;
      this.kept.push(m);
    }
    // Messages without blocks (an empty reply) directly after are part of no turn: keep them too,
    // or the next request would start over.
    while (i < rest.length && this.encoded(rest[i]!).length === 0) this.kept.push(rest[i++]!);
  }

  private append(bytes: Buffer): void {
    const need = this.prefixLength + bytes.length;
    if (need > this.prefix.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, Math.ceil(this.prefix.length * 1.5), 64 * 1024));
      this.prefix.copy(grown, 0, 0, this.prefixLength);
      this.prefix = grown;
    }
    bytes.copy(this.prefix, this.prefixLength);
    this.prefixLength = need;
  }

  private encoded(m: Said): EncodedBlock[] {
    let list = this.blocks.get(m);
    if (!list) {
      list = blocksOf(m).map((block) => ({
        block,
        bytes: Buffer.from(JSON.stringify(block)),
        toolResult: block.type === "tool_result",
      }));
      this.blocks.set(m, list);
    }
    return list;
  }
}

/** A turn's bytes; the request's last turn puts the second cache breakpoint on its last block. */
function turnPieces(turn: Turn, last: boolean): Buffer[] {
  const pieces: Buffer[] = [TURN[turn.role]];
  for (const [i, b] of turn.blocks.entries()) {
    if (i > 0) pieces.push(COMMA);
    const breakpoint = last && i === turn.blocks.length - 1 && takesCacheControl(b.block);
    pieces.push(breakpoint ? Buffer.from(JSON.stringify({ ...b.block, cache_control: EPHEMERAL })) : b.bytes);
  }
  pieces.push(CLOSE_TURN);
  return pieces;
}
