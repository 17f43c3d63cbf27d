import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { promisify } from "node:util";

const run = promisify(execFile);
const moduleUrl = new URL("./v8-tuning.js", import.meta.url).href;

/**
 * A node process that (optionally) keeps its young generation small, sends one request to a
 * local server, then allocates what survives a few scavenges; prints its young generation's
 * size in MB.
 */
async function youngGenerationAfterWork(keep: boolean): Promise<{ mb: number }> {
  const code = `
    const { createServer, request } = await import("node:http");
    const v8 = await import("node:v8");
    ${keep ? `(await import(${JSON.stringify(moduleUrl)})).tuneV8AfterFirstRequest();` : ""}
    const server = createServer((q, s) => s.end("ok")).listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    await new Promise((r, j) => {
      const req = request({ port: server.address().port, method: "POST" }, (res) => res.resume().on("end", r));
      req.on("error", j);
      req.end("{}");
    });
    server.close();
    const keepAlive = [];
    for (let round = 0; round < 40; round++) {
      const batch = [];
      for (let i = 0; i < 100000; i++) batch.push({ i, text: "x" + i });
      keepAlive.push(batch);
      if (keepAlive.length > 3) keepAlive.shift();
    }
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
    console.log(JSON.stringify({ mb: young.physical_space_size / 1048576 }));
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", code]);
  return JSON.parse(stdout);
}

test("after the first request has left, the young generation stops growing (peak memory stays flat)", async () => {
  const [kept, grown] = await Promise.all([youngGenerationAfterWork(true), youngGenerationAfterWork(false)]);
  assert.ok(grown.mb >= 16, `without it the young generation grows (${grown.mb} MB)`);
  assert.ok(kept.mb <= 8, `with it the young generation stays small (${kept.mb} MB)`);
});
