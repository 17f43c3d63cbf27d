// This node's place among the nodes sharing one PostgreSQL store: it registers where the others
// reach it (its management API and sandbox address), heartbeats, and on every beat marks the
// nodes that stopped heartbeating as dead — their sandboxes lost — and cuts the requests it is
// forwarding to them, so their clients get an error instead of waiting on a silent socket.
import { randomBytes } from "node:crypto";
import type { NodeRow, Store } from "./store.js";

export interface ClusterOptions {
  store: Store;
  node: string;
  apiUrl: string;
  sandboxUrl: string;
  /** How often this node heartbeats and checks the others (default: a fifth of deadAfterMs). */
  heartbeatMs?: number;
  /** A node silent this long is dead and its sandboxes lost (default 10 s). */
  deadAfterMs?: number;
  /** Told when this node marks nodes dead (for logs and metrics). */
  onDead?: (dead: Array<{ node: string; sandboxes: string[] }>) => void;
  /** Told when a heartbeat finds another process has taken this node's name. */
  onSuperseded?: () => void;
}

export class Cluster {
  readonly node: string;
  private readonly instance = randomBytes(8).toString("hex");
  private readonly heartbeatMs: number;
  readonly deadAfterMs: number;
  private timer: NodeJS.Timeout | undefined;
  private known = new Map<string, NodeRow>();
  private reads = 0;
  private applied = 0;
  private readonly inflight = new Map<string, Set<(why: Error) => void>>();
  private beating: Promise<void> | undefined;
  /** Since when this node's beats have reached the database without a failure. */
  private connectedSince = Date.now();

  constructor(private readonly o: ClusterOptions) {
    this.node = o.node;
    this.deadAfterMs = o.deadAfterMs ?? 10_000;
    this.heartbeatMs = o.heartbeatMs ?? Math.max(100, this.deadAfterMs / 5);
  }

  async join(): Promise<void> {
    await this.o.store.registerNode(
      { name: this.node, instance: this.instance, apiUrl: this.o.apiUrl, sandboxUrl: this.o.sandboxUrl },
      this.deadAfterMs,
    );
    await this.refresh();
    this.timer = setInterval(() => {
      if (!this.beating) this.beating = this.beat().finally(() => (this.beating = undefined));
    }, this.heartbeatMs);
    this.timer.unref();
  }

  /**
   * One beat: say we live, mark the silent dead, learn the current addresses. Only a node that
   * has reached the database for a whole timeout judges the others: after an outage of the
   * database every node is silent, and each gets that long to beat again before anyone is dead.
   */
  async beat(): Promise<void> {
    try {
      if (!(await this.o.store.heartbeat(this.node, this.instance))) this.o.onSuperseded?.();
      if (Date.now() - this.connectedSince >= this.deadAfterMs) {
        const dead = await this.o.store.markDeadNodes(this.deadAfterMs);
        if (dead.length > 0) this.o.onDead?.(dead);
      }
      await this.refresh();
    } catch {
      // The database is unreachable: try again on the next beat (requests fail on their own).
      this.connectedSince = Date.now();
    }
  }

  private async refresh(): Promise<void> {
    // Reads may overlap (a beat's and a request's): an older read never replaces a newer one.
    const mine = ++this.reads;
    const rows = await this.o.store.nodes();
    if (mine < this.applied) return;
    this.applied = mine;
    this.known = new Map(rows.map((r) => [r.name, r]));
    for (const r of rows) if (r.state !== "up") this.cut(r.name, new Error(`node '${r.name}' is ${r.state}`));
  }

  /** Where a node is, as last read (re-read if unknown or not up: it may have just (re)joined). */
  async peer(name: string): Promise<NodeRow | undefined> {
    if (this.known.get(name)?.state !== "up") await this.refresh().catch(() => {});
    return this.known.get(name);
  }

  /** Registers a request forwarded to `node`; `cancel` is called if that node is found dead. */
  track(node: string, cancel: (why: Error) => void): () => void {
    let set = this.inflight.get(node);
    if (!set) {
      set = new Set();
      this.inflight.set(node, set);
    }
    set.add(cancel);
    return () => {
      set.delete(cancel);
      if (set.size === 0 && this.inflight.get(node) === set) this.inflight.delete(node);
    };
  }

  private cut(node: string, why: Error): void {
    const set = this.inflight.get(node);
    if (!set) return;
    this.inflight.delete(node);
    for (const cancel of set) cancel(why);
  }

  /** Clean stop: this node's running sandboxes become paused (their files stay here). */
  async leave(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.beating;
    await this.o.store.leaveNode(this.node, this.instance);
  }
}
