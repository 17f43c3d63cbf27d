// Holds work that must not delay a model request until that request has left: memory's writes
// of a step (its messages, the "accessed" marks of what it recalled) run while the model
// thinks. A plain setImmediate is not enough for the first request of a run: its connection is
// still being made when the immediate fires, so ~5–10 ms of SQLite writes ran before the request
// was written. Closed when a step starts assembling its request, opened when that request left
// (or its call ended); work held while open runs at the next turn of the event loop.
export class RequestGate {
  private open = true;
  private held: (() => void)[] = [];

  /** A new request is being made: work from now on waits for `left`. */
  close(): void {
    this.open = false;
  }

  /** The request left (or will not): held work runs, in order, and later work at once. */
  readonly left = (): void => {
    this.open = true;
    const runs = this.held.splice(0);
    for (const run of runs) run();
  };

  /** Runs `run` once the current request has left (ContextOptions.defer). */
  readonly defer = (run: () => void): void => {
    if (this.open) setImmediate(run);
    else this.held.push(run);
  };
}
