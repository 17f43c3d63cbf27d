import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isSecretEnv, NON_INTERACTIVE_ENV, scrubEnv } from "./env.js";

describe("scrubEnv", () => {
  it("drops secrets and keeps ordinary variables", () => {
    const env = scrubEnv({
      PATH: "/usr/bin",
      HOME: "/home/u",
      LANG: "C.UTF-8",
      TERM: "xterm",
      USER: "u",
      PWD: "/x",
      FOO_API_KEY: "sk-123456789",
      OPENAI_BASE_URL: "http://x",
      ANTHROPIC_API_KEY: "a",
      AWS_REGION: "eu",
      AWS_SECRET_ACCESS_KEY: "s",
      GITHUB_TOKEN: "ghp_x",
      HANDS_MODEL: "m",
      DB_PASSWORD: "p",
      SMTP_PASS: "p",
      MY_SECRET: "s",
      GCLOUD_CREDENTIALS: "c",
      STRIPE_KEY: "sk_live_abcdef123",
      SORT_KEY: "name", // short, looks like a setting
      NPM_TOKEN: "t",
      DATABASE_URL: "postgres://user:hunter2@db/app",
      PLAIN_URL: "https://example.com/a",
      TOKENIZERS_PARALLELISM: "false",
      UNDEF: undefined,
    });
    for (const k of [
      "PATH",
      "HOME",
      "LANG",
      "TERM",
      "USER",
      "PWD",
      "SORT_KEY",
      "PLAIN_URL",
      "TOKENIZERS_PARALLELISM",
    ]) {
      assert.ok(k in env, `${k} should be kept`);
    }
    for (const k of [
      "FOO_API_KEY",
      "OPENAI_BASE_URL",
      "ANTHROPIC_API_KEY",
      "AWS_REGION",
      "AWS_SECRET_ACCESS_KEY",
      "GITHUB_TOKEN",
      "HANDS_MODEL",
      "DB_PASSWORD",
      "SMTP_PASS",
      "MY_SECRET",
      "GCLOUD_CREDENTIALS",
      "STRIPE_KEY",
      "NPM_TOKEN",
      "DATABASE_URL",
      "UNDEF",
    ]) {
      assert.ok(!(k in env), `${k} should be dropped`);
    }
  });

  it("adds non-interactive hints", () => {
    const env = scrubEnv({ PAGER: "less" });
    assert.equal(env["PAGER"], "cat");
    assert.equal(env["GIT_PAGER"], "cat");
    assert.equal(env["PYTHONUNBUFFERED"], "1");
    assert.equal(env["GIT_TERMINAL_PROMPT"], "0");
    assert.equal(env["DEBIAN_FRONTEND"], "noninteractive");
    assert.equal(env["CI"], "1");
    assert.deepEqual(scrubEnv({ A: "1" }, { hints: false }), { A: "1" });
    assert.ok(Object.keys(NON_INTERACTIVE_ENV).length > 5);
  });

  it("isSecretEnv is case-insensitive on names", () => {
    assert.equal(isSecretEnv("openai_api_key", "x"), true);
    assert.equal(isSecretEnv("path", "/bin"), false);
  });
});
