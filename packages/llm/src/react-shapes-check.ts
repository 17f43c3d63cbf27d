// Runs the collected ReAct reply shapes (test-data/react-shapes.json) through a react provider
// over HTTP — the real OpenAI-compatible client against the scripted server — and says for each
// whether the agent would get what the case expects. The provider classes are passed in, so the
// shapes bench can measure another build (e.g. main's) with the same checks.
import { isDeepStrictEqual } from "node:util";
import type { OpenAIProvider } from "./openai.js";
import type { ReactProvider } from "./react.js";
import type { startScriptedServer } from "./testing/scripted-server.js";
import type { Message, ModelResponse, ToolSchema } from "./types.js";

export type ShapeExpectation =
  | { action: string; input: Record<string, unknown>; ignoredActions?: number }
  | { final: string }
  | { correction: string[] };

export interface ShapeCase {
  id: string;
  /** Where the shape was seen. */
  source: string;
  /** Names of the offered tools (keys of ShapeData.tools). */
  tools: string[];
  /** The reply, one string per line. */
  reply: string[];
  expect: ShapeExpectation;
  /** What to expect instead when the server cuts the reply at the stop sequence. */
  expectWithStop?: ShapeExpectation;
}

export interface ShapeData {
  tools: Record<string, Omit<ToolSchema, "name">>;
  cases: ShapeCase[];
}

export interface ShapeOutcome {
  id: string;
  ok: boolean;
  /** What the agent got, in short. */
  got: string;
}

export interface ShapeBuild {
  ReactProvider: typeof ReactProvider;
  OpenAIProvider: typeof OpenAIProvider;
  startScriptedServer: typeof startScriptedServer;
}

export interface ShapeRunOptions {
  /**
   * Cut each reply at the request's stop sequences, as llama.cpp, vLLM and Ollama do; without
   * it the whole reply arrives, as from a server that ignores `stop`.
   */
  honourStop?: boolean;
}

/** The note the provider must add to the Observation when a reply held more Actions. */
const IGNORED_NOTE = "only the first Action ran";

function cutAtStop(text: string, stop: unknown): string {
  let end = text.length;
  for (const s of Array.isArray(stop) ? stop : []) {
    const at = typeof s === "string" && s ? text.indexOf(s) : -1;
    if (at >= 0 && at < end) end = at;
  }
  return text.slice(0, end);
}

function describe(res: ModelResponse): string {
  if (res.correction !== undefined) return `correction: ${res.correction.split("\n")[0]}`;
  const call = res.message.toolCalls?.[0];
  if (call)
    return `action ${call.name} ${call.arguments}${res.message.toolCalls!.length > 1 ? " (+more)" : ""}`;
  return `final ${JSON.stringify(res.message.content)}`;
}

function matches(res: ModelResponse, expect: ShapeExpectation): boolean {
  const calls = res.message.toolCalls ?? [];
  if ("correction" in expect) {
    const text = res.correction;
    return text !== undefined && calls.length === 0 && expect.correction.every((s) => text.includes(s));
  }
  if (res.correction !== undefined) return false;
  if ("final" in expect) return calls.length === 0 && res.message.content === expect.final;
  if (calls.length !== 1 || calls[0]!.name !== expect.action) return false;
  try {
    return isDeepStrictEqual(JSON.parse(calls[0]!.arguments), expect.input);
  } catch {
    return false;
  }
}

export async function runShapeCases(
  build: ShapeBuild,
  data: ShapeData,
  options: ShapeRunOptions = {},
): Promise<ShapeOutcome[]> {
  let reply = "";
  const server = await build.startScriptedServer((request) => ({
    content: options.honourStop ? cutAtStop(reply, request.body?.stop) : reply,
  }));
  const outcomes: ShapeOutcome[] = [];
  try {
    for (const c of data.cases) {
      const tools: ToolSchema[] = c.tools.map((name) => ({ name, ...data.tools[name]! }));
      const provider = new build.ReactProvider(
        new build.OpenAIProvider({ baseURL: server.url, apiKey: "test", model: "local-model" }),
      );
      const messages: Message[] = [{ role: "user", content: "Help me with this repository." }];
      reply = c.reply.join("\n");
      const res = await provider.complete({ messages, tools });
      const expect = (options.honourStop && c.expectWithStop) || c.expect;
      let ok = matches(res, expect);
      let got = describe(res);
      if (ok && "action" in expect && expect.ignoredActions) {
        // The next request must tell the model that only the first Action ran.
        const call = res.message.toolCalls![0]!;
        messages.push(res.message, { role: "tool", toolCallId: call.id, name: call.name, content: "done" });
        reply = "Final Answer: ok";
        await provider.complete({ messages, tools });
        const sent = server.requests.at(-1)?.body?.messages as Array<{ content: string }> | undefined;
        ok = sent?.at(-1)?.content.includes(IGNORED_NOTE) ?? false;
        if (!ok) got += " (the next Observation does not say the other Actions did not run)";
      }
      outcomes.push({ id: c.id, ok, got });
    }
  } finally {
    await server.close();
  }
  return outcomes;
}
