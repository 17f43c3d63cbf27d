import { mkdtempSync } from "node:fs";
import { startServe } from "/work/wt/serve/packages/serve/dist/index.js";

const s = await startServe({ dataDir: mkdtempSync("/tmp/sv/d-"), warm: {} });
const { key } = await s.keys.create("a");
process.env.E2B_API_KEY = key;
process.env.E2B_API_URL = s.apiUrl;
process.env.E2B_SANDBOX_URL = s.sandboxUrl;
const { Sandbox } = await import("e2b");
const t = Date.now();
const sb = await Sandbox.create(process.argv[2] ?? "docker");
console.log("created", Date.now() - t);
console.log((await sb.commands.run("echo hi")).stdout);
if (process.argv[3]) {
  await sb.pause();
  console.log("paused");
  await Sandbox.connect(sb.sandboxId);
  console.log("resumed");
}
await sb.kill();
console.log("killed");
await s.close();
console.log("closed");
setTimeout(() => {
  console.log(
    "still alive",
    process._getActiveHandles().map((h) => h.constructor.name),
  );
}, 3000).unref();
