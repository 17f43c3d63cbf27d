// What an untrusted folder's settings may still do: choose harmless things and make runs stricter.
import assert from "node:assert/strict";
import { test } from "node:test";
import { compileRule } from "@hands/agent";
import { untrustedConfig, untrustedNotice, untrustedPolicy } from "./trust.js";

const base = { approval: "ask", sandbox: "auto", provider: "openai" };

test("harmless settings apply; stricter approval and isolating sandboxes apply; the rest is named", () => {
  const { config, ignored } = untrustedConfig(
    {
      model: "m",
      maxSteps: 7,
      maxTokens: 9000,
      sandbox: "docker",
      approval: "read-only",
      memory: {
        enabled: true,
        contextBudget: 3000,
        summaries: "model",
        embeddings: {},
        lifecycle: {},
        extra: 1,
      },
      apiKey: "sk-project-key",
      idleTimeoutSeconds: 5,
    },
    base,
  );
  assert.deepEqual(config, {
    model: "m",
    maxSteps: 7,
    maxTokens: 9000,
    sandbox: "docker",
    approval: "read-only",
    memory: { enabled: true, contextBudget: 3000, summaries: "model" },
  });
  assert.deepEqual(ignored, [
    "memory.embeddings (memory text and the key it names would go to that endpoint)",
    "memory.lifecycle (it could delete the memories of every project)",
    "memory.extra (not a setting an untrusted folder may change)",
    "apiKey (your requests would go to the project's account)",
    "idleTimeoutSeconds (not a setting an untrusted folder may change)",
  ]);
  assert.ok(!ignored.join("\n").includes("sk-project-key"), "a key's value is not printed");
});

test("approval and sandbox are judged against what the run would use without the project", () => {
  const b = (approval: string, sandbox: string, provider = "openai") => ({ approval, sandbox, provider });
  const cases: [Record<string, unknown>, ReturnType<typeof b>, boolean][] = [
    [{ approval: "auto" }, b("ask", "auto"), false],
    [{ approval: "auto" }, b("auto", "auto"), true],
    [{ approval: "ask" }, b("auto", "auto"), true],
    [{ approval: "yolo" }, b("auto", "auto"), false],
    [{ sandbox: "local" }, b("ask", "auto"), false],
    [{ sandbox: "local" }, b("ask", "local"), true],
    [{ sandbox: "auto" }, b("ask", "bwrap"), false],
    [{ sandbox: "bwrap" }, b("ask", "local"), true],
    [{ provider: "openai" }, b("ask", "auto"), true],
    [{ provider: "anthropic" }, b("ask", "auto"), false],
    [{ provider: "openai" }, b("ask", "auto", "anthropic"), false],
  ];
  for (const [project, baseline, applies] of cases)
    assert.equal(
      Object.keys(untrustedConfig(project, baseline).config).length === 1,
      applies,
      `${JSON.stringify(project)} over ${JSON.stringify(baseline)}`,
    );
  // Control characters in a value cannot reach the terminal raw.
  const { ignored } = untrustedConfig({ baseUrl: "http://x/\u001b]0;pwned\u0007" }, base);
  assert.match(ignored[0]!, /^baseUrl "http:\/\/x\/\\u001b\]0;pwned\\u0007"/);
});

test("policy: deny and ask rules apply, allow rules are named and left out", () => {
  const rules = [
    compileRule({ prefix: "npm test", action: "allow" }, "p", 0),
    compileRule({ prefix: "rm", action: "deny" }, "p", 1),
    compileRule({ prefix: "git push", action: "ask" }, "p", 2),
  ];
  const r = untrustedPolicy(rules);
  assert.deepEqual(
    r.rules.map((x) => x.action),
    ["deny", "ask"],
  );
  assert.deepEqual(r.ignored, [
    'policy rule "prefix npm test" (allow: it would let commands run without asking)',
  ]);
});

test("the notice: one line per ignored setting, then how to trust; nothing when nothing was ignored", () => {
  assert.deepEqual(untrustedNotice("/ws", { trusted: false, why: "unknown" }, []), []);
  const lines = untrustedNotice("/ws", { trusted: false, why: "replaced", detail: "/ws was trusted…" }, [
    "a (b)",
  ]);
  assert.deepEqual(lines.slice(0, 2), ["hands: ignored from .hands/: a (b)", "hands: /ws was trusted…"]);
  assert.match(lines[2]!, /\/ws is not a trusted folder.*hands trust \(hands trust --list.*hands untrust/);
});

test("diagnostics: an untrusted folder may turn them off or list fewer, not wait minutes per edit", () => {
  const base = { provider: "openai", sandbox: "bwrap", approval: "auto" } as const;
  const { config, ignored } = untrustedConfig(
    { diagnostics: { enabled: false, maxErrors: 3, waitMs: 600_000, startWaitMs: 20_000 } },
    base,
  );
  assert.deepEqual(config.diagnostics, { enabled: false, maxErrors: 3, startWaitMs: 20_000 });
  assert.equal(ignored.length, 1);
  assert.match(ignored[0]!, /^diagnostics\.waitMs 600000 \(more than 30000 ms/);
});
