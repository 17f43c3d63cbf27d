import assert from "node:assert/strict";
import { test } from "node:test";
import { extractPlan, parseEditedPlan, planExecutionRequest, planFileText } from "./plan.js";

test("plan checklists are read from the usual list forms", () => {
  const text = "Here is the plan:\n- [ ] Add greet()\n* [x] Test it\n3. Update README\n\nDone.";
  assert.deepEqual(extractPlan(text), ["Add greet()", "Test it", "Update README"]);
  assert.deepEqual(extractPlan("no list here"), []);
  assert.match(planExecutionRequest(["a", "b"]), /1\. a\n2\. b/);
});

test("an edited plan file: comments dropped, list marks optional, blank lines ignored", () => {
  const file = planFileText(["Add greet()", "Test it"]);
  assert.deepEqual(parseEditedPlan(file), ["Add greet()", "Test it"]);
  const edited = `${file}\nplain line step\n  2) [x] numbered\n#- [ ] commented out\n   \n`;
  assert.deepEqual(parseEditedPlan(edited), ["Add greet()", "Test it", "plain line step", "numbered"]);
  assert.deepEqual(parseEditedPlan("# only comments\n\n"), []);
});
