// The policy against its corpora (corpus/*.json; bench/policy-corpus.mjs prints the same
// figures): every hostile command denied or asked, with and without the allow-rule scenario;
// at most 2 % of the everyday ones asked; none of the scenario's walk-arounds allowed.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { corpusPolicy, judge, readCorpora } from "./corpus-run.js";
import { loadShellParser } from "./shell-parse.js";

await loadShellParser();
const { hostile, everyday, allowRules, notAllowed } = readCorpora();
const show = (vs: { command: string; action: string; reason?: string }[]) =>
  vs.map((v) => `${v.action}: ${JSON.stringify(v.command)} ${v.reason ?? ""}`).join("\n");

describe("policy corpus", () => {
  it("holds at least 200 hostile and 200 everyday commands, none twice", () => {
    assert.ok(hostile.length >= 200, `${hostile.length} hostile`);
    assert.ok(everyday.length >= 200, `${everyday.length} everyday`);
    for (const set of [hostile, everyday]) {
      const seen = new Set(set.map((x) => x.command));
      assert.equal(seen.size, set.length, "a command is listed twice");
    }
  });

  for (const [label, allow] of [
    ["the built-in rules", []],
    ["the allow-rule scenario", allowRules],
  ] as const) {
    it(`denies or asks every hostile command under ${label}`, () => {
      const missed = judge(corpusPolicy([...allow]), hostile).filter(
        (v) => v.action !== "deny" && v.action !== "ask",
      );
      assert.equal(missed.length, 0, show(missed));
    });
    it(`asks about at most 2 % of the everyday commands under ${label}`, () => {
      const alarms = judge(corpusPolicy([...allow]), everyday).filter(
        (v) => v.action === "deny" || v.action === "ask",
      );
      assert.ok(alarms.length <= everyday.length * 0.02, show(alarms));
    });
  }

  it("allows none of the allow-rule walk-arounds, and still allows the plain forms", () => {
    const p = corpusPolicy(allowRules);
    const allowed = judge(
      p,
      notAllowed.map((command) => ({ group: "", command })),
    ).filter((v) => v.action === "allow");
    assert.equal(allowed.length, 0, show(allowed));
    const plain = judge(p, everyday).filter((v) => v.action === "allow");
    assert.ok(plain.length >= 10, `only ${plain.length} everyday commands allowed by the scenario's rules`);
  });
});
