import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { OpenAIProvider } from "./openai.js";
import { ReactProvider } from "./react.js";
import { runShapeCases, type ShapeData } from "./react-shapes-check.js";
import { startScriptedServer } from "./testing/scripted-server.js";

const data = JSON.parse(
  readFileSync(new URL("../test-data/react-shapes.json", import.meta.url), "utf8"),
) as ShapeData;
const build = { ReactProvider, OpenAIProvider, startScriptedServer };

// Every collected shape goes through the real provider over HTTP, from a server that honours
// the "\nObservation:" stop sequence and from one that ignores it.
for (const honourStop of [false, true]) {
  describe(`collected ReAct shapes (server ${honourStop ? "honours" : "ignores"} stop)`, () => {
    test("each case gets what it expects", async (t) => {
      const outcomes = await runShapeCases(build, data, { honourStop });
      assert.equal(outcomes.length, data.cases.length);
      for (const o of outcomes) await t.test(o.id, () => assert.ok(o.ok, o.got));
    });
  });
}
