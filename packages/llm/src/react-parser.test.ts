import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { stringParameter } from "./react-input.js";
import { cutAtObservation, parseReact, type ReactParse } from "./react-parser.js";
import type { ToolSchema } from "./types.js";

const str = { type: "string" };
const TOOLS: ToolSchema[] = [
  {
    name: "read_file",
    description: "",
    parameters: { type: "object", properties: { path: str }, required: ["path"] },
  },
  {
    name: "write_file",
    description: "",
    parameters: { type: "object", properties: { path: str, content: str }, required: ["path", "content"] },
  },
  { name: "list_dir", description: "", parameters: { type: "object", properties: { path: str } } },
  { name: "run_tests", description: "", parameters: { type: "object", properties: {} } },
];

function action(parsed: ReactParse): Extract<ReactParse, { kind: "action" }> {
  assert.equal(parsed.kind, "action", JSON.stringify(parsed));
  if (parsed.kind !== "action") throw new Error("unreachable");
  assert.deepEqual(JSON.parse(parsed.arguments), parsed.input);
  return parsed;
}

function error(parsed: ReactParse) {
  assert.equal(parsed.kind, "error", JSON.stringify(parsed));
  if (parsed.kind !== "error") throw new Error("unreachable");
  return parsed;
}

describe("parseReact: well-formed", () => {
  test("Thought / Action / Action Input", () => {
    const p = action(
      parseReact('Thought: I should read it.\nAction: read_file\nAction Input: {"path": "src/a.ts"}', TOOLS),
    );
    assert.equal(p.tool, "read_file");
    assert.deepEqual(p.input, { path: "src/a.ts" });
    assert.equal(p.thought, "I should read it.");
  });

  test("multi-line JSON input", () => {
    const p = action(
      parseReact(
        'Thought: write\nAction: write_file\nAction Input: {\n  "path": "a.txt",\n  "content": "x\\ny"\n}',
        TOOLS,
      ),
    );
    assert.deepEqual(p.input, { path: "a.txt", content: "x\ny" });
  });

  test("Final Answer", () => {
    const p = parseReact("Thought: done now\nFinal Answer: The file has 3 lines.\nSecond line.", TOOLS);
    assert.deepEqual(p, {
      kind: "final",
      thought: "done now",
      answer: "The file has 3 lines.\nSecond line.",
    });
  });

  test("Action: FINISH with answer, any case", () => {
    for (const word of ["FINISH", "finish", "Finish"]) {
      const p = parseReact(`Thought: ok\nAction: ${word}\nAction Input: {"answer": "all good"}`, TOOLS);
      assert.deepEqual(p, { kind: "final", thought: "ok", answer: "all good" });
    }
  });

  test("Action: FINISH without input falls back to the thought", () => {
    const p = parseReact("Thought: Everything is fixed.\nAction: FINISH\nAction Input: {}", TOOLS);
    assert.deepEqual(p, { kind: "final", thought: "Everything is fixed.", answer: "Everything is fixed." });
  });

  test("thought without a Thought label is the text before the Action", () => {
    const p = action(parseReact('Let me look.\nAction: list_dir\nAction Input: {"path": "."}', TOOLS));
    assert.equal(p.thought, "Let me look.");
  });
});

describe("parseReact: forgiving", () => {
  test("code fence around the JSON", () => {
    const p = action(
      parseReact('Thought: t\nAction: read_file\nAction Input:\n```json\n{"path": "a"}\n```', TOOLS),
    );
    assert.deepEqual(p.input, { path: "a" });
  });

  test("trailing commas and comments", () => {
    const text =
      'Action: write_file\nAction Input: {\n  // the target\n  "path": "a", /* inline */\n  "content": "b",\n}';
    assert.deepEqual(action(parseReact(text, TOOLS)).input, { path: "a", content: "b" });
  });

  test("single-quoted strings and unquoted keys", () => {
    const p = action(
      parseReact("Action: write_file\nAction Input: {path: 'a.py', content: 'print(\"hi\")'}", TOOLS),
    );
    assert.deepEqual(p.input, { path: "a.py", content: 'print("hi")' });
  });

  test("Python True/False/None", () => {
    const p = action(
      parseReact('Action: run_tests\nAction Input: {"verbose": True, "bail": False, "filter": None}', TOOLS),
    );
    assert.deepEqual(p.input, { verbose: true, bail: false, filter: null });
  });

  test("text before and after", () => {
    const text =
      'Sure! Here is my plan.\n\nThought: read\nAction: read_file\nAction Input: {"path": "x"}\nI will wait.';
    assert.deepEqual(action(parseReact(text, TOOLS)).input, { path: "x" });
  });

  test("missing Action Input means {}", () => {
    const p = action(parseReact("Thought: run them\nAction: run_tests", TOOLS));
    assert.equal(p.tool, "run_tests");
    assert.deepEqual(p.input, {});
    assert.equal(p.arguments, "{}");
  });

  test("case-insensitive keywords and markdown bold", () => {
    const p = action(
      parseReact('**thought:** hmm\n**ACTION:** read_file\naction input: {"path": "q"}', TOOLS),
    );
    assert.equal(p.thought, "hmm");
    assert.deepEqual(p.input, { path: "q" });
  });

  test("tool name in backticks, with (), or followed by words", () => {
    assert.equal(action(parseReact("Action: `run_tests`", TOOLS)).tool, "run_tests");
    assert.equal(action(parseReact("Action: run_tests()", TOOLS)).tool, "run_tests");
    assert.equal(action(parseReact('Action: "list_dir"\nAction Input: {}', TOOLS)).tool, "list_dir");
    assert.equal(action(parseReact("Action: Read_File\nAction Input: {}", TOOLS)).tool, "read_file");
  });

  test("arguments inside parentheses or on the Action line", () => {
    assert.deepEqual(action(parseReact('Action: read_file({"path": "p"})', TOOLS)).input, { path: "p" });
    assert.deepEqual(action(parseReact('Action: read_file {"path": "p"}', TOOLS)).input, { path: "p" });
  });

  test("JSON directly under the Action line without the label", () => {
    assert.deepEqual(action(parseReact('Action: read_file\n{"path": "p"}', TOOLS)).input, { path: "p" });
  });

  test("keywords mid-line when none start a line", () => {
    const p = action(parseReact('Thought: quick. Action: read_file Action Input: {"path": "m"}', TOOLS));
    assert.equal(p.tool, "read_file");
    assert.deepEqual(p.input, { path: "m" });
  });

  test("full-width colon", () => {
    assert.deepEqual(
      action(parseReact('Thought：读取文件\nAction：read_file\nAction Input：{"path": "a"}', TOOLS)).input,
      {
        path: "a",
      },
    );
  });

  test("a hallucinated Observation and everything after it is dropped", () => {
    const text =
      'Action: read_file\nAction Input: {"path": "a"}\nObservation: fake\nThought: x\nFinal Answer: no';
    const p = action(parseReact(text, TOOLS));
    assert.equal(p.tool, "read_file");
    assert.equal(cutAtObservation(text), 'Action: read_file\nAction Input: {"path": "a"}\n');
  });

  test("several actions: the first one wins", () => {
    const text =
      'Action: read_file\nAction Input: {"path": "1"}\nThought: next\nAction: read_file\nAction Input: {"path": "2"}';
    assert.deepEqual(action(parseReact(text, TOOLS)).input, { path: "1" });
  });

  test("braces inside strings do not end the object", () => {
    const p = action(
      parseReact('Action: write_file\nAction Input: {"path": "a", "content": "f() { return \'}\' }"}', TOOLS),
    );
    assert.equal(p.input.content, "f() { return '}' }");
  });

  test("raw newlines inside a string are kept", () => {
    const p = action(
      parseReact('Action: write_file\nAction Input: {"path": "a", "content": "line1\nline2"}', TOOLS),
    );
    assert.equal(p.input.content, "line1\nline2");
  });
});

describe("parseReact: failures", () => {
  test("plain prose has no keywords", () => {
    const p = error(parseReact("I think the answer is 42.", TOOLS));
    assert.equal(p.reason, "no_keywords");
    assert.match(p.error, /no Action and no Final Answer/);
  });

  test("a Thought alone", () => {
    const p = error(parseReact("Thought: I need to check the file first.", TOOLS));
    assert.equal(p.reason, "no_decision");
    assert.equal(p.thought, "I need to check the file first.");
  });

  test("unknown tool", () => {
    const p = error(parseReact('Action: delete_everything\nAction Input: {"x": 1}', TOOLS));
    assert.equal(p.reason, "unknown_tool");
    assert.match(p.error, /unknown tool "delete_everything"/);
  });

  test("empty tool name", () => {
    assert.equal(error(parseReact("Action:\nAction Input: {}", TOOLS)).reason, "no_tool_name");
  });

  test("hopeless JSON", () => {
    const p = error(parseReact('Action: read_file\nAction Input: {"path": "a" "b": }', TOOLS));
    assert.equal(p.reason, "bad_input");
    assert.match(p.error, /not valid JSON/);
  });

  test("unclosed JSON", () => {
    const p = error(parseReact('Action: write_file\nAction Input: {"path": "a", "content": "trunc', TOOLS));
    assert.equal(p.reason, "bad_input");
    assert.match(p.error, /not closed|not valid/);
  });

  test("plain text for a tool that needs several arguments", () => {
    const p = error(parseReact("Action: write_file\nAction Input: src/a.ts", TOOLS));
    assert.equal(p.reason, "bad_input");
    assert.equal(p.tool, "write_file");
    assert.equal(
      p.error,
      "write_file takes its arguments as one JSON object, not plain text (got: src/a.ts)",
    );
  });
});

describe("parseReact: structure over look-alikes", () => {
  test("cutAtObservation keeps an Observation echoed before the Thought and cuts one after the Action", () => {
    assert.equal(
      cutAtObservation("Observation: old\nThought: t\nFinal Answer: a"),
      "Observation: old\nThought: t\nFinal Answer: a",
    );
    assert.equal(cutAtObservation("Action: run_tests\nObservation: fake"), "Action: run_tests\n");
    assert.equal(cutAtObservation("Just prose.\nObservation: fake"), "Just prose.\n");
  });

  test("a long run of markdown decoration does not hang the keyword pattern", { timeout: 5000 }, () => {
    const p = parseReact(`${"*".repeat(20_000)}x\n${"#".repeat(20_000)} Thought y\nAction: run_tests`, TOOLS);
    assert.equal(action(p).tool, "run_tests");
  });

  test("a reply made of 20,000 Action lines runs the first and counts the rest", { timeout: 5000 }, () => {
    const p = action(parseReact("Action: run_tests\n".repeat(20_000), TOOLS));
    assert.equal(p.ignoredActions, 19_999);
    const oneLine = action(parseReact("Action: read_file Action Input: a.txt\n".repeat(20_000), TOOLS));
    assert.deepEqual(oneLine.input, { path: "a.txt" });
    assert.equal(oneLine.ignoredActions, 19_999);
    const echoes = action(
      parseReact(
        `${"Observation: x\nAction: run_tests\n".repeat(20_000)}Thought: y\nAction: list_dir`,
        TOOLS,
      ),
    );
    assert.equal(echoes.tool, "list_dir");
  });
});

describe("stringParameter", () => {
  test("the one required string, or the only string property", () => {
    assert.equal(
      stringParameter({ properties: { path: str, limit: { type: "integer" } }, required: ["path"] }),
      "path",
    );
    assert.equal(stringParameter({ properties: { path: str } }), "path");
    assert.equal(stringParameter({ properties: { q: { type: ["string", "null"] } }, required: ["q"] }), "q");
  });

  test("none when a tool needs more, or its one parameter is not a string", () => {
    assert.equal(
      stringParameter({ properties: { path: str, content: str }, required: ["path", "content"] }),
      undefined,
    );
    assert.equal(stringParameter({ properties: { path: str, glob: str } }), undefined);
    assert.equal(stringParameter({ properties: { n: { type: "integer" } }, required: ["n"] }), undefined);
    assert.equal(stringParameter(undefined), undefined);
  });
});

describe("parseReact: hostile names and keys", () => {
  test("a parameter named __proto__ stays an ordinary key", () => {
    const tool: ToolSchema = {
      name: "t",
      description: "",
      parameters: JSON.parse(
        '{"type":"object","properties":{"__proto__":{"type":"string"},"q":{"type":"string"}}}',
      ),
    };
    const p = action(parseReact('Action: t\nAction Input: __proto__="x", q="y"', [tool]));
    assert.equal(Object.getPrototypeOf(p.input), Object.prototype);
    assert.ok(Object.hasOwn(p.input, "__proto__"));
    assert.equal(p.arguments, '{"__proto__":"x","q":"y"}');
  });

  test("tool names with regex characters are matched literally", () => {
    const odd: ToolSchema = {
      name: "a.b+(c",
      description: "",
      parameters: { type: "object", properties: {} },
    };
    assert.equal(action(parseReact("Action: use the a.b+(c tool", [odd, ...TOOLS])).tool, "a.b+(c");
    assert.equal(error(parseReact("Action: use the axb tool", [odd])).reason, "unknown_tool");
  });
});
