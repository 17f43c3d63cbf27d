// NODE_EXTRA_CA_CERTS through the bin's launcher (bin/hands.js line 2, bin/extra-ca.js): node no
// longer parses the file at every start, yet a certificate only that file holds is trusted
// wherever this process opens TLS (the model endpoint through node:https, the global fetch,
// node:tls by `require` or `process.getBuiltinModule`), a context with a `ca` of its own still
// trusts only that, a certificate nobody trusts is still refused, and every process Hands starts
// sees the variable as the user set it.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { fileURLToPath } from "node:url";
import { type ScriptedServer, startScriptedServer } from "@hands/llm";
import { BIN, cleanEnv, scriptedRunArgs } from "../testing/cli-process.js";

const EXTRA_CA = fileURLToPath(new URL("../../bin/extra-ca.js", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` to its end. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A self-signed certificate for 127.0.0.1 in `dir` (name.pem, name-key.pem). */
function certificate(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}-key.pem`);
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
      ...["-keyout", key, "-out", cert, "-days", "1", "-subj", `/CN=${name}`],
      ...["-addext", "subjectAltName=IP:127.0.0.1"],
    ],
    { stdio: "ignore" },
  );
  return { cert, key };
}

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("NODE_EXTRA_CA_CERTS through the launcher", {
  skip: !hasOpenssl() && "openssl is needed to make a test certificate (scripts/test-env.sh)",
}, () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "hands-extra-ca-")));
  let trusted: { cert: string; key: string };
  let other: { cert: string; key: string };
  let model: ScriptedServer;
  let front: TlsServer;
  /** The scripted model behind TLS with `trusted`'s certificate, as a real https endpoint. */
  let httpsUrl = "";
  before(async () => {
    trusted = certificate(dir, "trusted");
    other = certificate(dir, "other");
    // A command, then (its result in the request) the answer.
    model = await startScriptedServer((req) =>
      req.body?.messages?.at(-1)?.role !== "tool"
        ? {
            toolCalls: [
              {
                name: "run_command",
                arguments: {
                  command: `printf '%s|%s' "$NODE_EXTRA_CA_CERTS" "\${HANDS_EXTRA_CA_CERTS-unset}"`,
                },
              },
            ],
          }
        : { content: "done" },
    );
    const modelPort = Number(new URL(model.url).port);
    front = createTlsServer(
      { key: readFileSync(trusted.key), cert: readFileSync(trusted.cert) },
      (socket) => {
        const up = connect(modelPort, "127.0.0.1");
        socket.pipe(up).pipe(socket);
        socket.on("error", () => up.destroy());
        up.on("error", () => socket.destroy());
      },
    );
    await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
    httpsUrl = `https://127.0.0.1:${(front.address() as AddressInfo).port}${new URL(model.url).pathname}`;
  });
  after(async () => {
    await new Promise((r) => front.close(r));
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A task run by the bin as a program (through its launcher, as `hands` is run). */
  function task(url: string, extra: Record<string, string>): Promise<Run> {
    const ws = mkdtempSync(join(dir, "ws-"));
    const env = cleanEnv(mkdtempSync(join(dir, "scratch-")), extra);
    delete env.NODE_EXTRA_CA_CERTS;
    Object.assign(env, extra);
    return run(BIN, [...scriptedRunArgs(url, ws), "--sandbox", "local", "print it"], env, ws);
  }
  const result = (r: Run) => JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}");

  test("an https model whose certificate only the file holds is trusted; commands see the variable as set", async () => {
    const r = await task(httpsUrl, { NODE_EXTRA_CA_CERTS: trusted.cert });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(result(r).status, "done", r.stdout);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const ran = events.find((e) => e.type === "tool_end" && e.name === "run_command");
    assert.match(ran?.output ?? "", new RegExp(`(^|\\n)${trusted.cert}\\|unset$`));
    assert.doesNotMatch(r.stderr, /Ignoring extra certs/);
  });

  test("without the file the endpoint is refused", async () => {
    const r = await task(httpsUrl, {});
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr + r.stdout, /SELF_SIGNED/);
  });

  test("the file is not read at start-up: a missing one is warned of only at the first TLS use", async () => {
    const missing = join(dir, "missing.pem");
    // A local model over http: no TLS, so the file is never read (node warned at every start).
    const plain = await task(model.url, { NODE_EXTRA_CA_CERTS: missing });
    assert.equal(plain.code, 0, plain.stderr);
    assert.doesNotMatch(plain.stderr, /Ignoring extra certs/);
    // At the first TLS use it is read, warned of as node warns, and no certificate is added.
    const viaHttps = `const https = require("node:https");
      return await new Promise((resolve) => https.get(url, () => resolve("trusted")).on("error", (e) => resolve(e.code)));`;
    const secure = await inProcessRun(viaHttps, missing);
    assert.equal(secure.result, "DEPTH_ZERO_SELF_SIGNED_CERT");
    assert.equal(secure.stderr, `Warning: Ignoring extra certs from \`${missing}\`, load failed: ENOENT\n`);
  });

  /** A node process that restores the variable as the bin does, then runs `body` (an async function's body). */
  async function inProcessRun(body: string, file: string): Promise<{ result: unknown; stderr: string }> {
    const script = `const extraCa = require(${JSON.stringify(EXTRA_CA)});
      extraCa.restore(${JSON.stringify(file)}, "run");
      const url = ${JSON.stringify(httpsUrl)};
      const port = Number(new URL(url).port);
      function tlsConnect(tls, options) {
        return new Promise((resolve) => {
          const s = tls.connect({ host: "127.0.0.1", port, ...options }, () => { s.end(); resolve("ok"); });
          s.on("error", (e) => resolve(e.code));
        });
      }
      (async () => { ${body} })().then((r) => console.log(JSON.stringify(r)), (e) => console.log(JSON.stringify("ERR " + e.message)));`;
    const env = { ...process.env };
    delete env.NODE_EXTRA_CA_CERTS;
    const r = await run(process.execPath, ["-e", script], env);
    assert.equal(r.code, 0, r.stderr);
    return { result: JSON.parse(r.stdout.trim()), stderr: r.stderr };
  }
  const inProcess = async (body: string, file: string) => (await inProcessRun(body, file)).result;

  test("in the process: fetch, node:https, node:tls (require or getBuiltinModule) trust the file", async () => {
    const viaFetch = `const r = await fetch(url + "/models"); return [process.env.NODE_EXTRA_CA_CERTS, r.status > 0];`;
    assert.deepEqual(await inProcess(viaFetch, trusted.cert), [trusted.cert, true]);
    const viaHttps = `const https = require("node:https");
      return await new Promise((resolve) => https.get(url + "/models", (res) => { res.resume(); resolve(res.statusCode > 0); }).on("error", (e) => resolve(e.code)));`;
    assert.equal(await inProcess(viaHttps, trusted.cert), true);
    assert.equal(await inProcess(viaHttps, other.cert), "DEPTH_ZERO_SELF_SIGNED_CERT");
    if (typeof process.getBuiltinModule === "function") {
      const viaBuiltin = `return await tlsConnect(process.getBuiltinModule("node:tls"), {});`;
      assert.equal(await inProcess(viaBuiltin, trusted.cert), "ok");
    }
  });

  test("in the process: a context with its own ca trusts only that; other options keep the file's roots", async () => {
    const body = `const tls = require("tls");
      return [
        await tlsConnect(tls, {}),
        await tlsConnect(tls, { ca: require("fs").readFileSync(${JSON.stringify(other.cert)}) }),
        await tlsConnect(tls, { minVersion: "TLSv1.3" }),
        await tlsConnect(tls, { ciphers: "DEFAULT" }),
        tls.createSecureContext() === tls.createSecureContext(),
        tls.createSecureContext({ minVersion: "TLSv1.3" }) === tls.createSecureContext(),
      ];`;
    assert.deepEqual(await inProcess(body, trusted.cert), [
      "ok",
      "DEPTH_ZERO_SELF_SIGNED_CERT",
      "ok",
      "ok",
      true,
      false,
    ]);
  });
});
