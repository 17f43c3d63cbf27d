// Approvals as a callback: with approval "ask" every write and command waits for `approve`.
// This one allows changes to files and refuses every command (the model is told why).
//   node examples/approvals.mjs [workspace]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSession } from "@hands/sdk";

const workspace = process.argv[2] ?? mkdtempSync(join(tmpdir(), "hands-example-"));
const session = await createSession({
  workspace,
  approval: "ask",
  approve: async (request) => {
    const what = request.kind === "command" ? request.command : (request.preview?.path ?? request.name);
    const allow = request.kind === "write";
    console.log(`${allow ? "allowed" : "refused"} ${request.kind}: ${what}`);
    return allow ? true : { answer: "no", reason: "this example runs no commands" };
  },
});
try {
  const result = await session.run("Write TODO.md with three tasks, then run `make test`.");
  console.log(`status: ${result.status}`);
  console.log(`answer: ${result.answer}`);
  process.exitCode = result.status === "done" ? 0 : 1;
} finally {
  await session.close();
}
