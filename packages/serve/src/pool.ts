// Warm sandboxes: a few started ahead of demand per template, so a create only has to hand one
// over (as E2B hands over a pre-booted VM snapshot). Only sandboxes without internet access
// are pooled — their network is fixed when they start; envs and the timeout are per create.
import type { SandboxRuntime } from "./runtime.js";

export interface Warm {
  id: string;
  rt: SandboxRuntime;
}

export class WarmPool {
  private readonly ready = new Map<string, Warm[]>();
  private readonly filling = new Set<string>();
  /** Starts under way: close() waits for them, so none outlives the pool. */
  private readonly starting = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    private readonly sizes: Record<string, number>,
    private readonly launch: (template: string) => Promise<Warm>,
    /** Called for a warm sandbox that is dropped (died while waiting, or the pool closed). */
    private readonly discard: (w: Warm) => Promise<void>,
  ) {}

  /** A warm sandbox of the template, if one is ready (the pool refills in the background). */
  take(template: string): Warm | undefined {
    const list = this.ready.get(template);
    let w = list?.shift();
    while (w && !w.rt.alive) {
      void this.discard(w);
      w = list?.shift();
    }
    this.fill(template);
    return w;
  }

  get size(): number {
    let n = 0;
    for (const l of this.ready.values()) n += l.length;
    return n;
  }

  /** Tops the pool up, one start at a time per template (a burst of starts would slow creates). */
  fill(template?: string): void {
    for (const t of template ? [template] : Object.keys(this.sizes)) {
      if (this.closed || this.filling.has(t)) continue;
      const want = this.sizes[t] ?? 0;
      if ((this.ready.get(t)?.length ?? 0) >= want) continue;
      this.filling.add(t);
      const start = this.launch(t).then(
        (w) => {
          if (this.closed) return this.discard(w);
          const list = this.ready.get(t) ?? [];
          list.push(w);
          this.ready.set(t, list);
        },
        () => {
          if (!this.closed) return new Promise((r) => setTimeout(r, 1000).unref());
        },
      );
      this.starting.add(start);
      void start.finally(() => {
        this.starting.delete(start);
        this.filling.delete(t);
        this.fill(t);
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.ready.values()].flat();
    this.ready.clear();
    await Promise.all([...all.map((w) => this.discard(w)), ...this.starting]);
  }
}
