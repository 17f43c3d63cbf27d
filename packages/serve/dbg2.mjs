import { mkdtempSync } from "node:fs";
import { startServe } from "/work/wt/serve/packages/serve/dist/index.js";

const dir = mkdtempSync("/tmp/sv/d-");
const s = await startServe({ dataDir: dir });
const { key } = await s.keys.create("acme");
const c = await fetch(s.apiUrl + "/v2/sandboxes", {
  method: "POST",
  headers: { "x-api-key": key, "content-type": "application/json" },
  body: "{}",
});
const sb = await c.json();
console.log(sb);
const msg = Buffer.from(JSON.stringify({ process: { cmd: "/bin/bash", args: ["-l", "-c", "echo hi"] } }));
const env = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), msg]);
env.writeUInt32BE(msg.length, 1);
const r = await fetch(s.sandboxUrl + "/process.Process/Start", {
  method: "POST",
  headers: {
    "content-type": "application/connect+json",
    "e2b-sandbox-id": sb.sandboxID,
    "e2b-sandbox-port": "49983",
    "x-access-token": sb.envdAccessToken,
    "connect-timeout-ms": "3000",
  },
  body: env,
  signal: AbortSignal.timeout(5000),
});
console.log(r.status, r.headers);
const buf = Buffer.from(await r.arrayBuffer());
console.log(buf.toString());
await s.close();
