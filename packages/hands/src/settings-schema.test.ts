// One table of settings, four ways in — a config file, the environment, a flag, an SDK option:
// a wrong value reads the same from each (where, what type, what it got) and a misspelt name
// gets the nearest real one. The config file and environment paths through resolveSettings
// (real files on disk), the SDK through createSession; the flags through the bin (cli tests).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { createSession, type SessionOptions, SettingsError } from "./index.js";
import { resolveSettings } from "./settings.js";
import { checkSetting, environmentWarnings, SETTINGS, settingFromText } from "./settings-schema.js";
import { trustFolder } from "./trust-store.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-schema-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A home with a user config and a workspace with a project config; `trusted` trusts it. */
function place(user: object, project: object = {}, trusted = true) {
  const home = mkdtempSync(join(scratch, "home-"));
  const ws = join(home, "ws");
  mkdirSync(join(ws, ".hands"), { recursive: true });
  mkdirSync(join(home, "config", "hands"), { recursive: true });
  const userFile = join(home, "config", "hands", "config.json");
  writeFileSync(userFile, JSON.stringify(user));
  writeFileSync(join(ws, ".hands", "config.json"), JSON.stringify(project));
  const env = { XDG_CONFIG_HOME: join(home, "config"), HOME: home };
  if (trusted) trustFolder(ws, env);
  return { ws, env, userFile, projectFile: join(ws, ".hands", "config.json") };
}

const errorOf = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof SettingsError, String(e));
    return e.message;
  }
  assert.fail("no error");
};

test('"maxSteps": "ten" in the user config is an error naming the file, the key, the type and the value', () => {
  const p = place({ maxSteps: "ten" });
  assert.equal(
    errorOf(() => resolveSettings({}, p.ws, p.env)),
    `${p.userFile}: "maxSteps" must be a positive whole number, got "ten"`,
  );
});

test("each key's wrong type, from the user and the project file", () => {
  const wrong: Record<string, unknown> = {
    provider: "opena1",
    model: "",
    baseUrl: "localhost:8000",
    apiKey: 42,
    maxSteps: 0,
    maxTokens: -1,
    idleTimeout: 2.5,
    sandbox: ["bwrap"],
    e2bTemplate: {},
    template: 7,
    reasoning: "max",
    approval: true,
    mcpServers: "x",
    databases: "x",
    hooks: "x",
    models: "x",
    subagents: "x",
    memory: [],
    repoMap: "maybe",
    repoMapTokens: 0,
    diagnostics: "off",
  };
  assert.deepEqual(
    Object.keys(wrong).sort(),
    Object.keys(SETTINGS)
      .filter((k) => (SETTINGS as Record<string, { config?: false }>)[k]!.config !== false)
      .sort(),
    "every config setting has a case",
  );
  for (const [key, value] of Object.entries(wrong)) {
    for (const where of ["user", "project"] as const) {
      const p = where === "user" ? place({ [key]: value }) : place({}, { [key]: value });
      const file = where === "user" ? p.userFile : p.projectFile;
      const message = errorOf(() => resolveSettings({}, p.ws, p.env));
      assert.ok(message.startsWith(`${file}: "${key}"`), `${where} ${key}: ${message}`);
      assert.match(message, /must be |unknown /, `${key}: ${message}`);
    }
  }
});

test("an unknown key is a warning with the nearest real one, and is not applied", () => {
  const p = place({ maxStep: 10, modle: "x", somethingElse: 1 }, { maxToken: 5 });
  const s = resolveSettings({}, p.ws, p.env);
  assert.equal(s.maxSteps, 50, "maxStep did not set maxSteps");
  assert.ok(
    s.warnings.includes(
      `${p.userFile}: unknown setting "maxStep" (did you mean "maxSteps"?); it is ignored (the settings: provider, model, baseUrl, apiKey, maxSteps, maxTokens, idleTimeout, sandbox, e2bTemplate, template, reasoning, approval, mcpServers, databases, models, hooks, subagents, memory, repoMap, repoMapTokens, diagnostics)`,
    ),
    s.warnings.join("\n"),
  );
  assert.ok(
    s.warnings.some((w) => w.startsWith(`${p.userFile}: unknown setting "modle" (did you mean "model"?)`)),
  );
  assert.ok(
    s.warnings.some((w) => w.startsWith(`${p.userFile}: unknown setting "somethingElse"; it is ignored`)),
  );
  assert.ok(
    s.warnings.some((w) =>
      w.startsWith(`${p.projectFile}: unknown setting "maxToken" (did you mean "maxTokens"?)`),
    ),
  );
  // Flag-only settings say which flag sets them.
  const q = place({ network: "host" });
  assert.deepEqual(resolveSettings({}, q.ws, q.env).warnings, [
    `${q.userFile}: "network" is not read from a config file (only --network sets it); it is ignored`,
  ]);
});

test("an untrusted project's settings are filtered first (trust.ts), then checked the same way", () => {
  const p = place({}, { maxSteps: "ten", baseUrl: 5 }, false);
  // baseUrl is ignored untrusted (whatever its type); maxSteps applies, so its type is checked.
  assert.equal(
    errorOf(() => resolveSettings({}, p.ws, p.env)),
    `${p.projectFile}: "maxSteps" must be a positive whole number, got "ten"`,
  );
  const q = place({}, { maxStep: 3 }, false);
  const s = resolveSettings({}, q.ws, q.env);
  assert.ok(
    s.ignored.some((i) => i.startsWith("maxStep")),
    "named as ignored, as before",
  );
});

test("the environment: the same words, with the variable's name; a near-miss HANDS_* name is a warning", () => {
  const p = place({});
  for (const [name, value, expected] of [
    ["HANDS_MAX_STEPS", "ten", 'HANDS_MAX_STEPS must be a positive whole number, got "ten"'],
    ["HANDS_MAX_TOKENS", "0", 'HANDS_MAX_TOKENS must be a positive whole number, got "0"'],
    ["HANDS_IDLE_TIMEOUT", "1.5", 'HANDS_IDLE_TIMEOUT must be a positive whole number, got "1.5"'],
    [
      "HANDS_SANDBOX",
      "bwarp",
      'HANDS_SANDBOX: unknown sandbox "bwarp"; use one of: auto, bwrap, docker, local, e2b (did you mean "bwrap"?)',
    ],
    [
      "HANDS_REASONING",
      "hihg",
      'HANDS_REASONING: unknown reasoning level "hihg"; use one of: off, low, medium, high (did you mean "high"?)',
    ],
    [
      "HANDS_APPROVAL",
      "Ask",
      'HANDS_APPROVAL: unknown approval mode "Ask"; use one of: auto, ask, read-only (did you mean "ask"?)',
    ],
    [
      "HANDS_PROVIDER",
      "antropic",
      'HANDS_PROVIDER: unknown provider "antropic"; use one of: openai, anthropic, react (did you mean "anthropic"?)',
    ],
  ] as const)
    assert.equal(
      errorOf(() => resolveSettings({}, p.ws, { ...p.env, [name]: value })),
      expected,
      name,
    );
  const s = resolveSettings({}, p.ws, {
    ...p.env,
    HANDS_MAX_STEP: "3",
    HANDS_DATA_DIR: "/x",
    HANDS_UNRELATED_THING: "1",
  });
  assert.equal(s.maxSteps, 50);
  assert.deepEqual(s.warnings, [
    "HANDS_MAX_STEP is not a Hands setting (did you mean HANDS_MAX_STEPS?); it is ignored",
  ]);
  assert.deepEqual(environmentWarnings({ HANDS_MODEL: "m", HANDS_SERVE_DATA: "/d" }), []);
});

test("flags and SDK options: the same checks and words, with their own names", async () => {
  assert.equal(
    errorOf(() => settingFromText("maxSteps", "ten", "--max-steps")),
    '--max-steps must be a positive whole number, got "ten"',
  );
  assert.equal(
    errorOf(() => checkSetting("maxSteps", "ten", "maxSteps")),
    'maxSteps must be a positive whole number, got "ten"',
  );
  const base: SessionOptions = {
    workspace: scratch,
    model: "m",
    baseURL: "http://127.0.0.1:9/v1",
    env: {},
    dataDir: join(scratch, "d"),
  };
  for (const [option, value, message] of [
    ["maxSteps", "ten", 'maxSteps must be a positive whole number, got "ten"'],
    ["idleTimeout", 0, "idleTimeout must be a positive whole number of seconds, got 0"],
    [
      "sandbox",
      "bwarp",
      'sandbox: unknown sandbox "bwarp"; use one of: auto, bwrap, docker, local, e2b (did you mean "bwrap"?)',
    ],
    ["reasoning", "max", 'reasoning: unknown reasoning level "max"; use one of: off, low, medium, high'],
    ["model", 5, "model must be a non-empty string, got 5"],
    ["baseURL", "127.0.0.1:8000", 'baseURL must be an http:// or https:// URL, got "127.0.0.1:8000"'],
    ["network", "all", 'network: unknown network "all"; use one of: none, host'],
    ["allowDomains", "pypi.org", 'allowDomains must be a list of non-empty strings, got "pypi.org"'],
    ["mcpServers", [], "mcpServers must be a JSON object, got []"],
  ] as const)
    await assert.rejects(
      createSession({ ...base, [option]: value } as unknown as SessionOptions),
      (e: Error) => e instanceof SettingsError && e.message === message,
      `${option}: expected ${message}`,
    );
});

test("the first request's repository map: 512 tokens unless set; off from a flag, the environment or a config file", () => {
  const p = place({});
  assert.equal(resolveSettings({}, p.ws, p.env).repoMapTokens, 512);
  assert.equal(resolveSettings({ repoMapTokens: 900 }, p.ws, p.env).repoMapTokens, 900);
  assert.equal(resolveSettings({ repoMap: "off" }, p.ws, p.env).repoMapTokens, 0);
  assert.equal(resolveSettings({}, p.ws, { ...p.env, HANDS_REPO_MAP: "off" }).repoMapTokens, 0);
  assert.equal(resolveSettings({}, p.ws, { ...p.env, HANDS_REPO_MAP_TOKENS: "64" }).repoMapTokens, 64);
  const q = place({ repoMap: "off" });
  assert.equal(resolveSettings({}, q.ws, q.env).repoMapTokens, 0);
  assert.match(
    errorOf(() => resolveSettings({}, p.ws, { ...p.env, HANDS_REPO_MAP_TOKENS: "lots" })),
    /^HANDS_REPO_MAP_TOKENS must be a positive whole number/,
  );
});
