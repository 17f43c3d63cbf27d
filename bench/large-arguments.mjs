#!/usr/bin/env node
// `npm run bench:large-arguments`: how long a streamed tool call with huge arguments takes to
// read, through both real providers against the scripted server on loopback. Linear time shows
// as a constant time per MB from 10 to 50 MB. Each size is sent as one SSE event (one delta: the
// case the SDKs' decoders made quadratic) and in 64 KB deltas.
import { loadavg } from "node:os";
import { AnthropicProvider, OpenAIProvider, startScriptedServer } from "../packages/llm/dist/index.js";

const sizesMb = [10, 20, 50];
const tools = [{ name: "write_file", description: "w", parameters: { type: "object" } }];
const rows = [];
for (const kind of ["openai", "anthropic"]) {
  for (const [label, chunkSize] of [
    ["one event", 1e9],
    ["64 KB deltas", 65536],
  ]) {
    for (const mb of sizesMb) {
      const args = JSON.stringify({ path: "big.txt", content: "x".repeat(mb * 1e6) });
      const server = await startScriptedServer([
        { toolCalls: [{ id: "c1", name: "write_file", arguments: args }], chunkSize },
      ]);
      const options = { model: "m", apiKey: "k", maxRetries: 0 };
      const provider =
        kind === "openai"
          ? new OpenAIProvider({ baseURL: server.url, ...options })
          : new AnthropicProvider({ baseURL: server.origin, ...options });
      const started = performance.now();
      const res = await provider.complete({ messages: [{ role: "user", content: "write it" }], tools });
      const ms = performance.now() - started;
      await server.close();
      if (res.message.toolCalls?.[0]?.arguments !== args)
        throw new Error(`${kind} ${mb} MB: arguments differ`);
      rows.push({ provider: kind, delivery: label, mb, ms: Math.round(ms), msPerMb: +(ms / mb).toFixed(1) });
    }
  }
}
for (const r of rows)
  console.log(
    `${r.provider.padEnd(10)} ${r.delivery.padEnd(13)} ${String(r.mb).padStart(3)} MB  ${String(r.ms).padStart(6)} ms  ${r.msPerMb} ms/MB`,
  );
console.log(`load average (1 min): ${loadavg()[0].toFixed(2)}`);
