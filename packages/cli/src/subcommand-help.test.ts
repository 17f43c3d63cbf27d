// Every subcommand of `hands`, and each of their own commands, answers -h / --help with its own
// help and exit 0, and does nothing else: no AGENTS.md written, no sessions listed, no sandbox
// touched, not even the data folder made. The list comes from the dispatch table itself, so a
// command added there is covered here.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { COMMAND_LINES } from "./command-help.js";
import { COMMANDS, helpAskedFor } from "./commands.js";
import { cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-help-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Every `hands NAME [SUB]` there is, from the table that dispatches them. */
const CASES = Object.entries(COMMANDS).flatMap(([name, command]) => [
  { argv: [name], sub: undefined as string | undefined, command },
  ...command.subcommands.map((sub) => ({ argv: [name, sub], sub, command })),
]);

/** Runs at most `n` of `jobs` at a time (the machine is shared). */
async function inBatches<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < jobs.length; i += n)
    results.push(...(await Promise.all(jobs.slice(i, i + n).map((j) => j()))));
  return results;
}

test("every subcommand and sub-subcommand answers --help / -h with its own help, exit 0, and does nothing else", async () => {
  assert.ok(CASES.length >= 15, `only ${CASES.length} commands found`);
  // One process per command (the two spellings take turns; both are checked in-process below).
  const jobs = CASES.map(({ argv, sub, command }, i) => async () => {
    const flag = i % 2 ? "-h" : "--help";
    const cwd = mkdtempSync(join(scratch, "cwd-"));
    const env = cleanEnv(join(scratch, `env-${i}`));
    const r = await runHands([...argv, flag], env, cwd);
    const label = `hands ${argv.join(" ")} ${flag}`;
    assert.equal(r.code, 0, `${label}: ${r.stderr}`);
    assert.equal(r.stdout, `${await command.help(sub)}\n`, label);
    assert.equal(r.stderr, "", label);
    assert.deepEqual(readdirSync(cwd), [], `${label} wrote in the current folder`);
    assert.equal(existsSync(env.HANDS_DATA_DIR!), false, `${label} made the data folder`);
    return label;
  });
  const ran = await inBatches(jobs, 4);
  assert.equal(ran.length, CASES.length);
});

test("-h and --help anywhere before --, with other arguments, ask for the same help", async () => {
  for (const { argv, sub, command } of CASES) {
    const own = await command.help(sub);
    for (const extra of [["--help"], ["-h"], ["x", "--limit", "3", "-h"], ["--all", "--help"]])
      assert.equal(
        await helpAskedFor(argv[0]!, [...argv.slice(1), ...extra]),
        own,
        [...argv, ...extra].join(" "),
      );
    assert.equal(await helpAskedFor(argv[0]!, [...argv.slice(1), "--", "--help"]), undefined);
    assert.equal(await helpAskedFor(argv[0]!, argv.slice(1)), undefined);
  }
  assert.equal(await helpAskedFor("fix the bug", ["--help"]), undefined, "not a command: a task");
});

test("a sub-subcommand's help is its own, not its parent's", async () => {
  for (const { argv, sub, command } of CASES.filter((c) => c.sub && c.argv[0] !== "serve")) {
    const own = await command.help(sub);
    assert.notEqual(own, await command.help(undefined), argv.join(" "));
    assert.match(own, new RegExp(`^Usage: hands ${argv.join(" ")}\\b`));
  }
});

test("--help after -- belongs to the command run, not to hands", async () => {
  const cwd = mkdtempSync(join(scratch, "cwd-"));
  const r = await runHands(
    ["sandbox", "exec", "--sandbox", "local", "--", "sh", "-c", 'echo "got $1"', "sh", "--help"],
    cleanEnv(join(scratch, "after-dashdash")),
    cwd,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "got --help\n");
});

test("hands --help lists every subcommand", async () => {
  const r = await runHands(["--help"], cleanEnv(join(scratch, "top")));
  assert.equal(r.code, 0);
  for (const name of Object.keys(COMMANDS))
    assert.match(r.stdout, new RegExp(`^  hands ${name}\\b`, "m"), name);
  assert.deepEqual(COMMAND_LINES.map((c) => c.name).sort(), Object.keys(COMMANDS).sort());
  assert.match(r.stdout, /hands serve/);
});
