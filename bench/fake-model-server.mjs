// A scripted OpenAI-compatible endpoint for the benchmarks: answers N-1 streamed tool calls
// (read_file of `file` unless `call` says otherwise), then a final answer. Every body is checked
// the way a real server would (the test suite's checks: JSON, model, roles, tool-call ids
// answered, tool schemas) and, beyond that, that each request answers the call the server made
// last: the same id, name and arguments, and a result `check` accepts (the tool really ran).
// With validate "after" (npm run bench) the bodies are kept as received and checked after the
// run, so the server's parsing is not timed as the harness's, yet no broken body goes unnoticed;
// with "each" (bench/steps-vs-pi.mjs) each is parsed and checked before it is answered, and a bad
// one gets a 400 as from a real server.
import { createServer } from "node:http";
import { checkChatBody } from "../packages/llm/dist/testing/request-check.js";

function sse(res, chunks) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end("data: [DONE]\n\n");
}

function chunk(delta, finish = null, usage) {
  return {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 0,
    model: "bench",
    choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  };
}

const textOf = (content) =>
  typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("");

/**
 * Why request `n` (1-based) does not carry the answer to the server's call n-1, or undefined:
 * its last assistant message must hold exactly that call, and the tool messages after it its
 * result (checkChatBody has checked the ids pair up).
 */
function stepError(body, n, call, check) {
  if (n === 1) return undefined;
  const messages = body.messages;
  const at = messages.findLastIndex((m) => m.role === "assistant");
  const calls = messages[at]?.tool_calls;
  const want = call(n - 1);
  const got = calls?.length === 1 ? calls[0] : undefined;
  if (got?.id !== `call_${n - 1}` || got.function.name !== want.name)
    return `the last assistant message is not the server's call_${n - 1} (${want.name}): ${JSON.stringify(calls)}`;
  let args;
  try {
    args = JSON.parse(got.function.arguments);
  } catch {
    return `call_${n - 1}'s arguments are not JSON: ${got.function.arguments}`;
  }
  if (JSON.stringify(args) !== JSON.stringify(want.args))
    return `call_${n - 1}'s arguments changed: ${got.function.arguments}`;
  const result = messages.slice(at + 1).find((m) => m.tool_call_id === got.id);
  const text = result ? textOf(result.content) : "";
  const wrong = result ? check?.(n - 1, text) : "no tool message";
  return wrong ? `call_${n - 1}'s result: ${wrong}: ${JSON.stringify(text.slice(0, 300))}` : undefined;
}

/**
 * steps: total model turns, the last one being the final answer. call(n): the n-th tool call
 * (1-based) as { name, args }. check(n, text): why the result of call n is wrong, if it is.
 */
export function startFakeModel({
  steps,
  file,
  call = () => ({ name: "read_file", args: { path: file } }),
  check,
  validate = "after",
}) {
  let count = 0;
  let firstRequestAt;
  let firstRequestNs;
  /** Each request as received: [method and path, body bytes]. */
  const received = [];
  /** The requests a real server would have rejected: { request (1-based), error }. */
  const rejected = [];
  const problem = (route, raw, n) => {
    if (route !== "POST /v1/chat/completions") return `unexpected ${route}`;
    let body;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch (err) {
      return `invalid JSON (${err.message}) in ${raw.length} bytes`;
    }
    return checkChatBody("openai", body) ?? stepError(body, n, call, check);
  };
  const server = createServer((req, res) => {
    if (firstRequestAt === undefined) {
      firstRequestAt = performance.now();
      firstRequestNs = process.hrtime.bigint();
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      count++;
      const route = `${req.method} ${req.url}`;
      const raw = Buffer.concat(chunks);
      received.push([route, raw]);
      const error = validate === "each" ? problem(route, raw, count) : undefined;
      if (error) {
        rejected.push({ request: count, error });
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: error, type: "invalid_request_error" } }));
        return;
      }
      const usage = { prompt_tokens: 100 * count, completion_tokens: 20, total_tokens: 100 * count + 20 };
      if (count < steps) {
        const { name, args } = call(count);
        const head = { index: 0, id: `call_${count}`, type: "function", function: { name, arguments: "" } };
        sse(res, [
          chunk({ role: "assistant", content: "Reading the file again." }),
          chunk({ tool_calls: [head] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args) } }] }),
          chunk({}, "tool_calls"),
          chunk(null, null, usage),
        ]);
      } else {
        sse(res, [
          chunk({ role: "assistant", content: "Done." }),
          chunk({}, "stop"),
          chunk(null, null, usage),
        ]);
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        get requests() {
          return count;
        },
        get firstRequestAt() {
          return firstRequestAt;
        },
        /** process.hrtime.bigint() (CLOCK_MONOTONIC) when the first request arrived. */
        get firstRequestNs() {
          return firstRequestNs;
        },
        /** The bodies as received, in order. */
        get bodies() {
          return received.map(([, body]) => body);
        },
        invalid() {
          if (validate === "each") return rejected;
          const out = [];
          received.forEach(([route, body], i) => {
            const error = problem(route, body, i + 1);
            if (error) out.push({ request: i + 1, error });
          });
          return out;
        },
        close: () => new Promise((r) => server.close(r)),
      });
    });
  });
}
