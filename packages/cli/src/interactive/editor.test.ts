import assert from "node:assert/strict";
import { test } from "node:test";
import { editorCommand } from "./editor.js";

test("the editor is $VISUAL, else $EDITOR, else vi", () => {
  assert.equal(editorCommand({ VISUAL: "code --wait", EDITOR: "nano" }), "code --wait");
  assert.equal(editorCommand({ VISUAL: " ", EDITOR: "nano" }), "nano");
  assert.equal(editorCommand({}), "vi");
});
