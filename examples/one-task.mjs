// One task, start to end: `node examples/one-task.mjs [workspace]`.
// The model comes from the environment as for the `hands` command (OPENAI_BASE_URL,
// OPENAI_API_KEY, HANDS_MODEL; or pass baseURL / apiKey / model to createSession).
// Without a workspace argument it works in a new temporary folder.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSession } from "@hands/sdk";

const workspace = process.argv[2] ?? mkdtempSync(join(tmpdir(), "hands-example-"));
// Safe defaults: the built-in command policy, and commands isolated in a sandbox (bubblewrap).
const session = await createSession({ workspace });
try {
  const result = await session.run("Create hello.txt containing 'hello from Hands', then say what you did.");
  console.log(`status: ${result.status}`);
  console.log(`answer: ${result.answer}`);
  console.log(`sandbox: ${result.safety.sandbox} (isolated: ${result.safety.isolated})`);
  console.log(`workspace: ${workspace}`);
  process.exitCode = result.status === "done" ? 0 : 1;
} finally {
  await session.close();
}
