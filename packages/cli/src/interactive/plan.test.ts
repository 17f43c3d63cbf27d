import assert from "node:assert/strict";
import { test } from "node:test";
import { extractPlan, planExecutionRequest } from "./plan.js";

test("plan checklists are read from the usual list forms", () => {
  const text = "Here is the plan:\n- [ ] Add greet()\n* [x] Test it\n3. Update README\n\nDone.";
  assert.deepEqual(extractPlan(text), ["Add greet()", "Test it", "Update README"]);
  assert.deepEqual(extractPlan("no list here"), []);
  assert.match(planExecutionRequest(["a", "b"]), /1\. a\n2\. b/);
});
