// Without --model, hands asks the endpoint for its models: each way that can fail is said as
// it is (the key refused, nothing listening, no answer, an answer that is not a model list);
// and a chat request the endpoint refuses with 404 (an unknown model) lists the models it has.
// Real HTTP servers on loopback, answering as OpenAI-compatible servers do; the real bin.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-endpoint-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
const servers: Server[] = [];
after(() => {
  for (const s of servers) s.closeAllConnections?.();
  for (const s of servers) s.close();
});

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<string> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => handler(req, res, body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

/** As OpenAI answers a wrong key: 401 with its error body, for /models and chat alike. */
const keyChecked = (req: IncomingMessage, res: ServerResponse): boolean => {
  if (req.headers.authorization === "Bearer right-key") return true;
  json(res, 401, {
    error: {
      message: "Incorrect API key provided: wr***ey.",
      type: "invalid_request_error",
      code: "invalid_api_key",
    },
  });
  return false;
};

/** hands without --model against `url`: the run must stop before any chat request. */
function noModel(url: string, key = "wrong-key") {
  const ws = mkdtempSync(join(scratch, "ws-"));
  return runHands(
    ["--base-url", url, "--api-key", key, "--cwd", ws, "--quiet", "--sandbox", "local", "say hi"],
    cleanEnv(scratch),
  );
}

test("401: the key is refused (not 'lists none')", async () => {
  let chats = 0;
  const url = await serve((req, res) => {
    if (!keyChecked(req, res)) return;
    if (req.url === "/v1/chat/completions") chats++;
    json(res, 200, { object: "list", data: [{ id: "m1", object: "model" }] });
  });
  const r = await noModel(url);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /answered HTTP 401: the API key from --api-key is refused \("Incorrect API key provided/,
  );
  assert.doesNotMatch(r.stderr, /lists none|lists no models/);
  assert.equal(chats, 0);
});

test("connection refused: nothing listens at the URL", async () => {
  const url = await serve(() => {});
  const closed = servers.pop()!;
  await new Promise((r) => closed.close(r));
  const r = await noModel(url);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `nothing listens at ${url.replace(/[/.]/g, "\\$&")} \\(connection refused\\) \\(base URL from --base-url\\)`,
    ),
  );
});

test("no answer in time: a timeout, said as one", async () => {
  const url = await serve(() => {
    // Never answers.
  });
  const r = await noModel(url);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /\/v1\/models did not answer within 1\.5 s/);
});

test("an answer that is not a model list: garbage, with its first bytes, shown printable", async () => {
  const url = await serve((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<html><body>Welcome to nginx!\u001b[31m</body></html>");
  });
  const r = await noModel(url, "right-key");
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /answered, but not with an OpenAI-style model list \(<html><body>Welcome to nginx!\?\[31m/,
  );
  assert.doesNotMatch(r.stderr, /\u001b\[31m/);
});

test("/models is 404: the base URL is probably wrong", async () => {
  const url = await serve((_req, res) => json(res, 404, { detail: "Not Found" }));
  const r = await noModel(url.replace(/\/v1$/, ""), "right-key");
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /\/models does not exist \(HTTP 404\).*usually ends in \/v1/);
});

test("an empty model list still says to pass --model", async () => {
  const url = await serve((_req, res) => json(res, 200, { object: "list", data: [] }));
  const r = await noModel(url, "right-key");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /lists no models; pass --model NAME/);
});

test("a 404 for an unknown model lists the models the endpoint has", async () => {
  const asked: string[] = [];
  const url = await serve((req, res, body) => {
    if (!keyChecked(req, res)) return;
    if (req.method === "GET" && req.url === "/v1/models")
      return json(res, 200, {
        object: "list",
        data: ["qwen2.5-coder", "llama3.1"].map((id) => ({ id, object: "model", owned_by: "me" })),
      });
    if (req.method === "POST" && req.url === "/v1/chat/completions") {
      const model = (JSON.parse(body) as { model: string }).model;
      asked.push(model);
      // OpenAI's answer for a model it does not serve.
      return json(res, 404, {
        error: {
          message: `The model \`${model}\` does not exist or you do not have access to it.`,
          type: "invalid_request_error",
          param: null,
          code: "model_not_found",
        },
      });
    }
    json(res, 404, { detail: "Not Found" });
  });
  const ws = mkdtempSync(join(scratch, "ws-"));
  const r = await runHands(
    [
      "--base-url",
      url,
      "--api-key",
      "right-key",
      "--model",
      "qwen-coder",
      "--cwd",
      ws,
      "--quiet",
      "--sandbox",
      "local",
      "say hi",
    ],
    cleanEnv(scratch),
  );
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(asked, ["qwen-coder"]);
  assert.match(r.stderr, /The model `qwen-coder` does not exist/);
  assert.match(r.stderr, /has no model qwen-coder; it lists: qwen2\.5-coder, llama3\.1/);
});
