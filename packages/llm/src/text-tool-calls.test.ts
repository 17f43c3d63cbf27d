import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { extractTextToolCalls, extractTextToolCallsWithRest } from "./text-tool-calls.js";

const TOOLS = ["read_file", "write_file"];

function simplified(text: string) {
  return extractTextToolCalls(text, TOOLS)?.map((c) => ({ name: c.name, args: JSON.parse(c.arguments) }));
}

describe("extractTextToolCalls", () => {
  test("bare JSON object with arguments or parameters", () => {
    assert.deepEqual(simplified('{"name": "read_file", "arguments": {"path": "a.ts"}}'), [
      { name: "read_file", args: { path: "a.ts" } },
    ]);
    assert.deepEqual(simplified('{"name": "read_file", "parameters": {"path": "b.ts"}}'), [
      { name: "read_file", args: { path: "b.ts" } },
    ]);
  });

  test("arguments given as a JSON string", () => {
    assert.deepEqual(simplified('{"name": "read_file", "arguments": "{\\"path\\": \\"c\\"}"}'), [
      { name: "read_file", args: { path: "c" } },
    ]);
  });

  test("inside a ```json fence, with prose around", () => {
    const text = 'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "x"}}\n```\n';
    const found = extractTextToolCallsWithRest(text, TOOLS);
    assert.ok(found);
    assert.equal(found.rest, "I will read it.");
    assert.deepEqual(JSON.parse(found.calls[0]!.arguments), { path: "x" });
  });

  test("Qwen/Hermes <tool_call> tags, several of them", () => {
    const text =
      '<tool_call>\n{"name": "read_file", "arguments": {"path": "1"}}\n</tool_call>\n<tool_call>\n{"name": "write_file", "arguments": {"path": "2", "content": "z"}}\n</tool_call>';
    const found = extractTextToolCallsWithRest(text, TOOLS);
    assert.ok(found);
    assert.equal(found.rest, "");
    assert.deepEqual(
      found.calls.map((c) => c.name),
      ["read_file", "write_file"],
    );
    assert.notEqual(found.calls[0]!.id, found.calls[1]!.id);
  });

  test("unclosed <tool_call> at the end of the text", () => {
    assert.deepEqual(simplified('<tool_call>{"name": "read_file", "arguments": {"path": "u"}}'), [
      { name: "read_file", args: { path: "u" } },
    ]);
  });

  test("a JSON list of calls", () => {
    assert.deepEqual(
      simplified(
        '[{"name": "read_file", "arguments": {"path": "1"}}, {"name": "read_file", "arguments": {"path": "2"}}]',
      ),
      [
        { name: "read_file", args: { path: "1" } },
        { name: "read_file", args: { path: "2" } },
      ],
    );
  });

  test("OpenAI-shaped {type, function} object", () => {
    assert.deepEqual(
      simplified('{"type": "function", "function": {"name": "read_file", "arguments": {"path": "f"}}}'),
      [{ name: "read_file", args: { path: "f" } }],
    );
  });

  test("refuses unknown tool names", () => {
    assert.equal(extractTextToolCalls('{"name": "rm_rf", "arguments": {"path": "/"}}', TOOLS), null);
    assert.equal(
      extractTextToolCalls('<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>', TOOLS),
      null,
    );
    // A list with one unknown name is not taken half-way.
    assert.equal(
      extractTextToolCalls(
        '[{"name": "read_file", "arguments": {}}, {"name": "rm_rf", "arguments": {}}]',
        TOOLS,
      ),
      null,
    );
  });

  test("ordinary text and JSON are left alone", () => {
    assert.equal(extractTextToolCalls("The function f() { return 1 } is fine.", TOOLS), null);
    assert.equal(extractTextToolCalls('Config: {"name": "my-app", "version": "1.0"}', TOOLS), null);
    assert.equal(extractTextToolCalls('{"name": "read_file", "arguments": {}}', []), null);
  });
});
