// The last lines of a stream (a server's stderr), in bounded memory however much it writes:
// what a failure report shows when a server will not start or stops.
import { StringDecoder } from "node:string_decoder";

export class LineTail {
  private readonly lines: string[] = [];
  private partial = "";
  private readonly decoder = new StringDecoder("utf8");
  /** Bytes seen in all (the report says how much was left out). */
  bytes = 0;

  constructor(
    private readonly maxLines = 20,
    private readonly maxLineChars = 300,
  ) {}

  push(chunk: Buffer | string): void {
    this.bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
    const text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    const pieces = text.split("\n");
    const last = pieces.pop() ?? "";
    for (const piece of pieces) {
      this.addLine(this.partial + piece);
      this.partial = "";
    }
    // A line that never ends stays capped too.
    this.partial = (this.partial + last).slice(0, this.maxLineChars + 1);
  }

  /** Adds a line of Hands' own (e.g. what a server printed on stdout that is not JSON-RPC). */
  note(line: string): void {
    this.addLine(line);
  }

  /** The kept lines, the unfinished one included. */
  text(): string {
    const all = this.partial.trim() ? [...this.lines, this.cap(this.partial)] : this.lines;
    return all.join("\n");
  }

  private addLine(raw: string): void {
    const line = this.cap(raw.replace(/\r$/, ""));
    if (!line.trim()) return;
    this.lines.push(line);
    if (this.lines.length > this.maxLines) this.lines.shift();
  }

  private cap(line: string): string {
    return line.length > this.maxLineChars ? `${line.slice(0, this.maxLineChars)}…` : line;
  }
}
