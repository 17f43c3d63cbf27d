// Capacity of one node as slots, and a bounded, fair queue for creates that find it full:
// waiters are served one tenant at a time in turn (a tenant with 50 queued creates does not
// starve one with 1), each waits at most `timeoutMs`, and no more than `maxWaiting` wait at all.

export class CapacityError extends Error {
  constructor(
    message: string,
    readonly reason: "queue_full" | "queue_timeout" | "aborted",
  ) {
    super(message);
  }
}

interface Waiter {
  grant: () => void;
  fail: (e: CapacityError) => void;
}

export class FairQueue {
  private inUse = 0;
  private waitingCount = 0;
  /** Tenants with waiters, in turn order (Map keeps insertion order; a served tenant goes last). */
  private readonly byTenant = new Map<string, Waiter[]>();

  constructor(
    readonly capacity: number,
    readonly maxWaiting: number,
    readonly timeoutMs: number,
  ) {}

  get used(): number {
    return this.inUse;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Takes a slot, waiting in the queue when none is free. */
  acquire(tenant: string, signal?: AbortSignal): Promise<void> {
    if (this.inUse < this.capacity && this.waitingCount === 0) {
      this.inUse++;
      return Promise.resolve();
    }
    if (this.waitingCount >= this.maxWaiting)
      return Promise.reject(
        new CapacityError(
          `no capacity: ${this.capacity} sandboxes are running and ${this.waitingCount} creates are already waiting`,
          "queue_full",
        ),
      );
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          cleanup();
          resolve();
        },
        fail: (e) => {
          cleanup();
          this.remove(tenant, waiter);
          reject(e);
        },
      };
      const timer = setTimeout(
        () =>
          waiter.fail(
            new CapacityError(
              `no capacity: waited ${this.timeoutMs} ms in the queue for one of ${this.capacity} sandbox slots`,
              "queue_timeout",
            ),
          ),
        this.timeoutMs,
      );
      const onAbort = () => waiter.fail(new CapacityError("create was cancelled while queued", "aborted"));
      signal?.addEventListener("abort", onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const list = this.byTenant.get(tenant);
      if (list) list.push(waiter);
      else this.byTenant.set(tenant, [waiter]);
      this.waitingCount++;
    });
  }

  /** Gives a slot back and hands it to the next tenant in turn. */
  release(): void {
    this.inUse = Math.max(0, this.inUse - 1);
    while (this.inUse < this.capacity && this.waitingCount > 0) {
      const [tenant, list] = this.byTenant.entries().next().value as [string, Waiter[]];
      const w = list.shift() as Waiter;
      this.byTenant.delete(tenant);
      if (list.length > 0) this.byTenant.set(tenant, list);
      this.waitingCount--;
      this.inUse++;
      w.grant();
    }
  }

  private remove(tenant: string, w: Waiter): void {
    const list = this.byTenant.get(tenant);
    const i = list?.indexOf(w) ?? -1;
    if (!list || i < 0) return;
    list.splice(i, 1);
    this.waitingCount--;
    if (list.length === 0) this.byTenant.delete(tenant);
  }
}
