import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { findBalancedEnd, LenientJsonError, parseLenientJson } from "./lenient-json.js";

describe("parseLenientJson", () => {
  test("strict JSON passes through", () => {
    assert.deepEqual(parseLenientJson('{"a": [1, 2.5, -3e2], "b": {"c": null}}'), {
      a: [1, 2.5, -300],
      b: { c: null },
    });
  });

  test("comments, trailing commas, single quotes, unquoted keys, Python words", () => {
    const text = `{
      # python comment line
      name: 'x', // trailing comment
      /* block */ "list": [1, 2, 3,],
      ok: True, bad: False, none: None,
    }`;
    assert.deepEqual(parseLenientJson(text), {
      name: "x",
      list: [1, 2, 3],
      ok: true,
      bad: false,
      none: null,
    });
  });

  test("escapes, unicode and triple-quoted strings", () => {
    assert.deepEqual(parseLenientJson("{'a': 'it\\'s', \"b\": \"\\u00e9\\n\"}"), { a: "it's", b: "é\n" });
    assert.deepEqual(parseLenientJson('{"code": """def f():\n    return "x"\n"""}'), {
      code: 'def f():\n    return "x"\n',
    });
  });

  test("errors carry a position", () => {
    assert.throws(() => parseLenientJson('{"a": }'), LenientJsonError);
    assert.throws(() => parseLenientJson('{"a": 1} trailing'), /unexpected text after the JSON value/);
    assert.throws(() => parseLenientJson('{"a": "open'), /unterminated string/);
    assert.throws(() => parseLenientJson("{a: undefined}"), /unknown word "undefined"/);
  });
});

describe("findBalancedEnd", () => {
  test("skips brackets in strings and comments", () => {
    const text = '{"a": "}", /* } */ "b": [1, {"c": "]"}]} tail';
    assert.equal(text.slice(0, findBalancedEnd(text, 0)), '{"a": "}", /* } */ "b": [1, {"c": "]"}]}');
  });

  test("unclosed or mismatched gives -1", () => {
    assert.equal(findBalancedEnd('{"a": 1', 0), -1);
    assert.equal(findBalancedEnd("{]", 0), -1);
  });
});
