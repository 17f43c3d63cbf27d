// `--json` output: one JSON line per event, written in batches. A step emits several events
// within one turn of the event loop, and writing each alone cost a write syscall (stdout to a
// pipe or a file is synchronous) and a wake-up of the reader per event. Lines are joined and
// written once the turn ends, in order; `flush()` writes what is pending at once (before exit).

export class JsonLines {
  private pending = "";
  private scheduled = false;

  constructor(private readonly out: (text: string) => void) {}

  /** Queues `value` as one line; it is written when the current turn of the event loop ends. */
  readonly write = (value: unknown): void => {
    this.pending += `${JSON.stringify(value)}\n`;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  };

  /** Writes every pending line now. */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.pending === "") return;
    const text = this.pending;
    this.pending = "";
    this.out(text);
  };
}
