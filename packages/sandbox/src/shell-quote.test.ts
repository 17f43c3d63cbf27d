// shellQuote/shellJoin against the real shells: whatever the argument, the program receives it
// byte for byte.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { shellJoin, shellQuote } from "./shell-quote.js";

const TRICKY_ARGS = [
  "plain",
  "two words",
  "",
  "it's",
  "'",
  "''",
  '"double"',
  "a\nb\n",
  "$HOME",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell must not expand it
  "${PATH}",
  "$(echo pwned)",
  "`echo pwned`",
  "back\\slash\\n",
  "\\",
  "*",
  "?",
  "~",
  "-n",
  "a;b|c&d>e<f",
  "tab\there",
  "!bang",
  "#hash",
  "{a,b}",
  "ünïcödé ✓",
];

/** What the program sees: each argument NUL-terminated, so empty ones and newlines show. */
function received(shell: string, args: string[]): string[] {
  const r = spawnSync(shell, ["-c", `printf '%s\\0' ${shellJoin(args)}`], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split("\0").slice(0, -1);
}

for (const shell of ["/bin/sh", "/bin/bash", "/bin/dash"].filter((s) => existsSync(s))) {
  test(`${shell} receives every tricky argument exactly`, () => {
    assert.deepEqual(received(shell, TRICKY_ARGS), TRICKY_ARGS);
    for (const a of TRICKY_ARGS) assert.deepEqual(received(shell, [a]), [a], JSON.stringify(a));
  });
}

test("plain words stay readable; an empty one is ''; NUL cannot be passed", () => {
  assert.equal(shellQuote("ls"), "ls");
  assert.equal(shellQuote("src/a.ts"), "src/a.ts");
  assert.equal(shellQuote(""), "''");
  assert.equal(shellQuote("it's"), "'it'\\''s'");
  assert.equal(shellJoin(["sh", "-c", "echo one; echo two"]), "sh -c 'echo one; echo two'");
  assert.throws(() => shellQuote("a\0b"), /NUL/);
});
