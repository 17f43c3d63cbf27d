// The scripted server's floor for bench/steps-vs-pi.mjs: a minimal client that sends the bodies
// an agent sent (FILE: the bodies back to back, FILE.json: their lengths) to URL's
// /chat/completions one after another over one kept-alive connection, as the agents' fetch
// does, reading each streamed answer to its end. No agent: what is left is the server's cost
// and the least any client pays to send and receive the same bytes.
//   node bench/replay-bodies.mjs FILE URL
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";

const [file, url] = process.argv.slice(2);
const all = readFileSync(file);
const lengths = JSON.parse(readFileSync(`${file}.json`, "utf8"));
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(body) {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/chat/completions`,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": body.length },
      },
      (res) => {
        let answer = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (answer += d));
        res.on("end", () =>
          res.statusCode === 200 && answer.endsWith("data: [DONE]\n\n")
            ? resolve()
            : reject(new Error(`HTTP ${res.statusCode}: ${answer.slice(0, 300)}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

let at = 0;
for (const n of lengths) {
  await post(all.subarray(at, at + n));
  at += n;
}
agent.destroy();
