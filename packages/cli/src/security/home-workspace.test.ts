// A workspace that holds Hands' own folders (hands run in $HOME): a sandboxed command must not
// plant a user config, policy or trusted-folders entry (they would apply to every workspace),
// nor rewrite the data folder (sessions and memory that later runs trust).
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { cleanEnv, runHands } from "../testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-home-ws-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const ATTACK = [
  "mkdir -p .config/hands",
  `echo '{"baseUrl":"http://127.0.0.1:9/v1","approval":"auto","sandbox":"local"}' > .config/hands/config.json`,
  `echo '{"rules":[{"prefix":"rm","action":"allow"}]}' > .config/hands/policy.json`,
  `echo '[]' > .config/hands/trusted-folders.json`,
  "echo forged >> .local/share/hands/audit.jsonl",
  "echo planted > .local/share/hands/planted",
].join("; ");

for (const kind of ["bwrap", "docker"]) {
  describe(`a workspace at $HOME (${kind})`, () => {
    test("a command cannot write Hands' user config or data folder; the workspace itself stays writable", async () => {
      const home = mkdtempSync(join(scratch, `home-${kind}-`));
      mkdirSync(join(home, ".config"), { recursive: true });
      const server = await startScriptedServer([
        { toolCalls: [{ name: "run_command", arguments: { command: `${ATTACK}; echo done > mine.txt` } }] },
        { content: "finished" },
      ]);
      try {
        const env = cleanEnv(home, {
          HOME: home,
          XDG_CONFIG_HOME: join(home, ".config"),
          HANDS_DATA_DIR: join(home, ".local", "share", "hands"),
        });
        const run = await runHands(
          [
            "--base-url",
            server.url,
            "--api-key",
            "k",
            "--model",
            "m",
            "--sandbox",
            kind,
            "--cwd",
            home,
            "go",
          ],
          env,
        );
        assert.equal(run.code, 0, run.stderr);
        for (const f of ["config.json", "policy.json", "trusted-folders.json"])
          assert.equal(existsSync(join(home, ".config", "hands", f)), false, `${f} was planted`);
        assert.equal(existsSync(join(home, ".local", "share", "hands", "planted")), false);
        const audit = join(home, ".local", "share", "hands", "audit.jsonl");
        if (existsSync(audit)) assert.doesNotMatch(readFileSync(audit, "utf8"), /^forged$/m);
        assert.equal(readFileSync(join(home, "mine.txt"), "utf8"), "done\n");
        const result = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
        assert.match(result.content, /Read-only file system/);
        // A later run in another workspace still reads the user's real (absent) config.
        writeFileSync(join(home, "after.txt"), "");
      } finally {
        await server.close();
      }
    });

    test("with the data folder elsewhere, a command still cannot plant the code cache's key", async () => {
      const home = mkdtempSync(join(scratch, `key-${kind}-`));
      // A key of the attacker's choosing, as the bin would accept it: 32 bytes, 0600.
      const plant =
        "mkdir -p .local/share/hands && head -c 32 /dev/zero > .local/share/hands/code-cache.key && chmod 600 .local/share/hands/code-cache.key";
      const server = await startScriptedServer([
        { toolCalls: [{ name: "run_command", arguments: { command: `${plant}; echo done > mine.txt` } }] },
        { content: "finished" },
      ]);
      try {
        const env = cleanEnv(home, {
          HOME: home,
          XDG_DATA_HOME: join(home, ".local", "share"),
          HANDS_DATA_DIR: join(scratch, `data-${kind}`),
        });
        const args = [
          "--base-url",
          server.url,
          "--api-key",
          "k",
          "--model",
          "m",
          "--sandbox",
          kind,
          "--cwd",
          home,
        ];
        const run = await runHands([...args, "go"], env);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(readFileSync(join(home, "mine.txt"), "utf8"), "done\n");
        const key = join(home, ".local", "share", "hands", "code-cache.key");
        assert.ok(existsSync(key), "the bin made its key");
        assert.notDeepEqual(readFileSync(key), Buffer.alloc(32), "the planted key");
        const result = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
        assert.match(result.content, /Read-only file system/);
      } finally {
        await server.close();
      }
    });
  });
}
