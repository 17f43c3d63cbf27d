// The events of a run as they happen, one JSON object per line — the same events
// `hands --json` prints; the last one is the result. Ctrl-C stops the run (status "aborted").
//   node examples/stream-events.mjs "list the files here" [workspace]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSession } from "@hands/sdk";

const task = process.argv[2] ?? "List the files in the workspace.";
const workspace = process.argv[3] ?? mkdtempSync(join(tmpdir(), "hands-example-"));
const session = await createSession({ workspace });
const controller = new AbortController();
process.once("SIGINT", () => controller.abort());
try {
  const run = session.stream(task, { signal: controller.signal });
  for await (const event of run) {
    if (event.type === "text_delta" || event.type === "thinking_delta") continue; // pieces of a response
    console.log(JSON.stringify(event));
  }
  const result = await run.result;
  process.exitCode = result.status === "done" ? 0 : 1;
} finally {
  await session.close();
}
