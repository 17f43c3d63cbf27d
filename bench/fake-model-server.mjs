// A scripted OpenAI-compatible endpoint for the benchmark: answers N-1 streamed read_file
// tool calls, then a final answer. It keeps each request body as received and checks them all
// after the run (`invalid()`, the same checks as the test suite's scripted server: JSON, model,
// roles, tool-call ids answered), so a real server's parsing is not timed as the harness's,
// yet no broken body goes unnoticed.
import { createServer } from "node:http";
import { checkChatRequest } from "../packages/llm/dist/testing/request-check.js";

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

/** steps: total model turns, the last one being the final answer. */
export function startFakeModel({ steps, file }) {
  let count = 0;
  let firstRequestAt;
  /** Each request as received: [method and path, body bytes]. */
  const received = [];
  const server = createServer((req, res) => {
    if (firstRequestAt === undefined) firstRequestAt = performance.now();
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      count++;
      received.push([`${req.method} ${req.url}`, Buffer.concat(chunks)]);
      const usage = { prompt_tokens: 100 * count, completion_tokens: 20, total_tokens: 100 * count + 20 };
      if (count < steps) {
        const call = {
          index: 0,
          id: `call_${count}`,
          type: "function",
          function: { name: "read_file", arguments: "" },
        };
        sse(res, [
          chunk({ role: "assistant", content: "Reading the file again." }),
          chunk({ tool_calls: [call] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ path: file }) } }] }),
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
        /** The requests a real server would have rejected: { request (1-based), error }. */
        invalid() {
          const out = [];
          received.forEach(([route, body], i) => {
            const error =
              route !== "POST /v1/chat/completions"
                ? `unexpected ${route}`
                : checkChatRequest("openai", body.toString("utf8"));
            if (error) out.push({ request: i + 1, error });
          });
          return out;
        },
        close: () => new Promise((r) => server.close(r)),
      });
    });
  });
}
