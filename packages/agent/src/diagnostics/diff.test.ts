import assert from "node:assert/strict";
import { test } from "node:test";
import { changedLines, introducedErrors, newErrors } from "./diff.js";
import type { Diag } from "./lsp-client.js";

const err = (line: number, message: string, severity = 1): Diag => ({
  line,
  character: 4,
  endLine: line,
  message,
  severity,
});

test("newErrors: an error moved down by inserted lines is not new; one on a changed line is; warnings never", () => {
  const before = "a\nb\nc\n";
  const after = "# note\n# more\na\nb\nc\n";
  assert.deepEqual(newErrors([err(2, "old one")], [err(4, "old one")], changedLines(before, after)), []);
  const edited = "a\nB(1)\nc\n";
  const found = newErrors(
    [],
    [err(1, "Expected 0 arguments"), err(2, "a warning", 2)],
    changedLines(before, edited),
  );
  assert.deepEqual(
    found.map((d) => d.message),
    ["Expected 0 arguments"],
  );
});

test("introducedErrors: reverting a bug does not blame the revert for an error the file had all along", () => {
  const original = "x = f()\ny = x > 1\n";
  const bugged = "x = f(1)\ny = x > 1\n";
  // The file as first seen has an error on line 1 (0-based) that the bug hid (x became Unknown).
  const first = { text: original, diags: [err(1, 'Operator ">" not supported for "None"')] };
  const before = { text: bugged, diags: [err(0, "Expected 0 positional arguments")] };
  const after = { text: original, diags: [err(1, 'Operator ">" not supported for "None"')] };
  assert.deepEqual(introducedErrors(before, after, first), []);
  // Without what the file was first, it looks new (what was reported before).
  assert.equal(introducedErrors(before, after).length, 1);
  // A real new error is still new against both.
  const broken = {
    text: "x = f()\ny = x > 1\nz = nope\n",
    diags: [...after.diags, err(2, '"nope" is not defined')],
  };
  assert.deepEqual(
    introducedErrors(before, broken, first).map((d) => d.message),
    ['"nope" is not defined'],
  );
  // The bug itself, the first edit: new against the text before, which is the first text.
  assert.deepEqual(
    introducedErrors(first, before, first).map((d) => d.message),
    ["Expected 0 positional arguments"],
  );
});
