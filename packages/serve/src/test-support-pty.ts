// What a terminal client sees of a pty: the bytes of its onData callback, decoded, and a way to
// wait until they show something. Shared by the PTY tests of each SDK version and backend.

export class Screen {
  private readonly decoder = new TextDecoder();
  text = "";
  bytes = 0;
  private waiters: (() => void)[] = [];

  /** The SDK's onData callback. */
  readonly onData = (d: Uint8Array): void => {
    this.bytes += d.length;
    this.text += this.decoder.decode(d, { stream: true });
    for (const w of this.waiters.splice(0)) w();
  };

  /** Resolves once the output after `from` matches `re`; rejects with what was seen after `ms`. */
  async until(re: RegExp, ms = 10_000, from = 0): Promise<RegExpMatchArray> {
    const deadline = Date.now() + ms;
    for (;;) {
      const m = this.text.slice(from).match(re);
      if (m) return m;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`terminal never showed ${re}; it showed:\n${JSON.stringify(this.text.slice(-2000))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Does `action` and waits for `re` in what arrives from its start on (output can beat its reply). */
  async after(action: () => Promise<unknown>, re: RegExp, ms?: number): Promise<RegExpMatchArray> {
    const from = this.text.length;
    await action();
    return this.until(re, ms, from);
  }
}

export const keys = (s: string): Uint8Array => new TextEncoder().encode(s);
