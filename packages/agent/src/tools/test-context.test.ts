import assert from "node:assert/strict";
import { existsSync, realpathSync } from "node:fs";
import { describe, it } from "node:test";
import { makeTestContext } from "./test-context.js";

describe("makeTestContext", () => {
  it("creates a real temp workspace with a working sandbox and cleans up", async () => {
    const t = makeTestContext();
    const { ctx, cleanup } = t;
    assert.equal(ctx, t);
    assert.equal(realpathSync(ctx.workspace), ctx.workspace);
    const sb = await ctx.sandbox();
    assert.equal(sb, await ctx.sandbox());
    assert.equal(sb.workspace, ctx.workspace);
    assert.equal((await sb.exec("pwd")).stdout.trim(), ctx.workspace);
    assert.equal(ctx.signal.aborted, false);
    t.abort();
    assert.equal(ctx.signal.aborted, true);
    await cleanup();
    assert.equal(existsSync(ctx.workspace), false);
  });
});
