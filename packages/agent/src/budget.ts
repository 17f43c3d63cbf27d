// A token budget shared down a tree of runs: a sub-agent's tokens count against its own limit
// and against every parent's, so a parent's --max-tokens covers what its children spend.

export class TokenBudget {
  used = 0;
  constructor(
    readonly limit: number | undefined,
    private readonly parent?: TokenBudget,
  ) {}

  /** Counts `tokens` here and in every parent. */
  add(tokens: number): void {
    this.used += tokens;
    this.parent?.add(tokens);
  }

  /** The budget that is spent (this one or a parent), or undefined while there is some left. */
  spent(): TokenBudget | undefined {
    if (this.limit !== undefined && this.used >= this.limit) return this;
    return this.parent?.spent();
  }

  /** Tokens left before some budget of the chain is spent (undefined: no limit anywhere). */
  remaining(): number | undefined {
    const own = this.limit === undefined ? undefined : Math.max(0, this.limit - this.used);
    const up = this.parent?.remaining();
    if (own === undefined) return up;
    return up === undefined ? own : Math.min(own, up);
  }

  /** A budget for a child run: its own `limit` (if any) within this one. */
  child(limit?: number): TokenBudget {
    return new TokenBudget(limit, this);
  }
}
