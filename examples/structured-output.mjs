// A structured answer: the run's `output` is the model's answer as JSON, validated against the
// schema. An answer that does not match is sent back to the model with the errors (twice at
// most); if it never matches, the status is "error" and `output` is unset.
//   node examples/structured-output.mjs [workspace]
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSession } from "@hands/sdk";

const workspace = process.argv[2] ?? mkdtempSync(join(tmpdir(), "hands-example-"));
if (!process.argv[2]) writeFileSync(join(workspace, "notes.md"), "# Notes\n");

const schema = {
  type: "object",
  properties: {
    files: { type: "array", items: { type: "string" } },
    count: { type: "integer", minimum: 0 },
  },
  required: ["files", "count"],
  additionalProperties: false,
};

const session = await createSession({ workspace });
try {
  const result = await session.run("Which files are in the workspace?", { outputSchema: schema });
  if (result.status !== "done") {
    console.error(`${result.status}: ${result.reason}`);
    process.exitCode = 1;
  } else {
    console.log(JSON.stringify(result.output));
  }
} finally {
  await session.close();
}
