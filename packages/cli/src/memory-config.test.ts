import assert from "node:assert/strict";
import { test } from "node:test";
import { parseMemoryConfig, resolveMemorySettings } from "@hands/sdk/root";
import { parseCliArgs } from "./args.js";

const resolve = (argv: string[], env: Record<string, string>, project: unknown, user: unknown) =>
  resolveMemorySettings(
    parseCliArgs(argv),
    env,
    parseMemoryConfig(project, "project.json"),
    parseMemoryConfig(user, "user.json"),
  );

test("memory settings: flags > environment > project > user", () => {
  const user = {
    contextBudget: 1000,
    summaries: "model",
    embeddings: { baseUrl: "http://user/v1", model: "u-emb" },
    lifecycle: { idleDecay: 0.5, archiveAfterDays: 2, maintainEveryHours: 6 },
  };
  const project = {
    embeddings: { baseUrl: "http://proj/v1", model: "p-emb", dimensions: 8 },
    lifecycle: { idleDecay: 0.8 },
  };

  const fromFiles = resolve([], {}, project, user);
  assert.equal(fromFiles.enabled, true, "a configured budget turns memory on");
  assert.equal(fromFiles.budget, 1000);
  assert.deepEqual(fromFiles.summaries, { kind: "model" });
  assert.deepEqual(fromFiles.embeddings, { baseUrl: "http://proj/v1", model: "p-emb", dimensions: 8 });
  assert.deepEqual(fromFiles.lifecycle, { idleDecay: 0.8, archiveAfterMs: 2 * 86_400_000 });
  assert.equal(fromFiles.maintainEveryMs, 6 * 3_600_000);

  const fromEnv = resolve([], { HANDS_CONTEXT_BUDGET: "2000" }, project, user);
  assert.equal(fromEnv.budget, 2000);

  const fromFlags = resolve(
    ["--context-budget", "3000", "--memory-summaries", "small-model", "--embeddings-model", "flag-emb"],
    { HANDS_CONTEXT_BUDGET: "2000" },
    project,
    user,
  );
  assert.equal(fromFlags.budget, 3000);
  assert.deepEqual(fromFlags.summaries, { kind: "model", model: "small-model" });
  assert.deepEqual(fromFlags.embeddings, { baseUrl: "http://proj/v1", model: "flag-emb", dimensions: 8 });

  const plain = resolve([], {}, {}, {});
  assert.equal(plain.enabled, true, "memory is on by default");
  assert.equal(plain.budget, undefined, "the budget comes from the model's window");
  assert.deepEqual(plain.summaries, { kind: "extractive" });
  assert.equal(plain.embeddings, undefined);
  assert.equal(plain.maintainEveryMs, 86_400_000);
  assert.equal(resolve(["--memory"], {}, {}, {}).enabled, true);
  assert.equal(resolve(["--no-memory"], {}, {}, {}).enabled, false);
  assert.equal(resolve(["--no-memory"], {}, { enabled: true }, {}).enabled, false, "the flag wins");
  assert.equal(resolve(["--no-memory"], { HANDS_CONTEXT_BUDGET: "2000" }, {}, {}).enabled, false);
  assert.throws(() => resolve(["--no-memory", "--context-budget", "9"], {}, {}, {}), /contradict/);
  assert.equal(resolve([], {}, { enabled: true }, { enabled: false }).enabled, true);
  assert.equal(resolve([], {}, { enabled: false }, { enabled: true }).enabled, false);
  // "hash" in the project turns off the user's endpoint.
  assert.equal(resolve([], {}, { embeddings: "hash" }, user).embeddings, undefined);
});

test("bad memory settings are usage errors that name the file and the key", () => {
  const bad: [unknown, RegExp][] = [
    ["on", /project\.json: "memory" must be an object/],
    [{ enabled: "yes" }, /memory\.enabled must be true or false/],
    [{ contextBudget: -5 }, /memory\.contextBudget must be a positive whole number/],
    [{ summaries: "" }, /memory\.summaries must be/],
    [{ embeddings: { model: "x" } }, /memory\.embeddings\.baseUrl must be an http\(s\) URL/],
    [{ embeddings: { baseUrl: "http://h/v1" } }, /memory\.embeddings\.model must be a model name/],
    [
      { embeddings: { baseUrl: "http://h/v1", model: "m", dimensions: 1.5 } },
      /dimensions must be a positive/,
    ],
    [{ lifecycle: { idleDecay: 2 } }, /memory\.lifecycle\.idleDecay must be a number from 0 to 1/],
    [{ lifecycle: { archiveAfterDays: -1 } }, /memory\.lifecycle\.archiveAfterDays must be a number ≥ 0/],
    [{ lifecycle: { forgetAfter: 3 } }, /unknown key memory\.lifecycle\.forgetAfter/],
    [{ budget: 3 }, /unknown key memory\.budget/],
  ];
  for (const [value, message] of bad) assert.throws(() => parseMemoryConfig(value, "project.json"), message);
  assert.throws(
    () => resolve(["--embeddings-url", "http://e/v1"], {}, {}, {}),
    /--embeddings-url and --embeddings-model go together/,
  );
  assert.throws(
    () => resolve(["--embeddings-url", "ftp://e", "--embeddings-model", "m"], {}, {}, {}),
    /--embeddings-url must be an http\(s\) URL/,
  );
  assert.throws(() => resolve([], { HANDS_CONTEXT_BUDGET: "lots" }, {}, {}), /HANDS_CONTEXT_BUDGET/);
});
