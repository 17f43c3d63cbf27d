// Attacks on the code interpreter's port (49999) of a real `hands serve`, over real HTTP: with
// only a sandbox's id (ids show up in process lists and logs), no token or a wrong one must not
// create, list, restart, remove or run contexts; another tenant's key and tokens are no better;
// a flood of creates with the right token stops at the bound and leaves no more kernels than
// it; creates and removes are in the audit log. The official @e2b/code-interpreter SDK keeps
// working with the traffic access token it is given.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Sandbox } from "@e2b/code-interpreter";
import { checkBwrap } from "@hands/sandbox";
import { contextLimit } from "../interpreter/service.js";
import { raw, startTestServe, type TestServe } from "../test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

/**
 * IPython kernels running in the sandbox (its own pid namespace): processes whose argv is
 * `… -m ipykernel_launcher …`, as the bridge starts them (the bracket keeps the count's own
 * command line from matching).
 */
const COUNT_KERNELS = `python3 -c "import os,re;print(sum(1 for p in os.listdir('/proc') if p.isdigit() and re.search(rb'\\x00-m\\x00ipykernel_[l]auncher\\x00', open('/proc/'+p+'/cmdline','rb').read() if os.path.exists('/proc/'+p+'/cmdline') else b'')))"`;

describe("code interpreter port: access tokens, bounds, audit", { skip, timeout: 600_000 }, () => {
  let s: TestServe;
  let victim: Sandbox;
  let keyB: string;
  before(async () => {
    s = await startTestServe();
    keyB = (await s.keys.create("tenant-b")).key;
    victim = await Sandbox.create();
  });
  after(async () => {
    await victim?.kill().catch(() => {});
    await s?.stop();
  });

  const at = (id: string, headers: Record<string, string> = {}) => ({
    "e2b-sandbox-id": id,
    "e2b-sandbox-port": "49999",
    "content-type": "application/json",
    ...headers,
  });
  /** The sandbox's envd token, as its tenant reads it from the API (the SDK keeps it protected). */
  const envdToken = async (id: string, key = s.key) =>
    (
      (await raw(`${s.apiUrl}/sandboxes/${id}`, { headers: { "x-api-key": key } })).json() as {
        envdAccessToken: string;
      }
    ).envdAccessToken;
  const kernels = async (sb: Sandbox) => Number((await sb.commands.run(COUNT_KERNELS)).stdout.trim());

  /** Every context call and a cell, as an attacker who knows the id sends them. */
  const attacks = (id: string, ctxId: string, headers: Record<string, string>) => [
    raw(`${s.sandboxUrl}/contexts`, { method: "POST", headers: at(id, headers), body: "{}" }),
    raw(`${s.sandboxUrl}/contexts`, { headers: at(id, headers) }),
    raw(`${s.sandboxUrl}/contexts/${ctxId}`, { method: "DELETE", headers: at(id, headers) }),
    raw(`${s.sandboxUrl}/contexts/${ctxId}/restart`, { method: "POST", headers: at(id, headers) }),
    raw(`${s.sandboxUrl}/execute`, {
      method: "POST",
      headers: at(id, headers),
      body: JSON.stringify({ code: "import os; os.system('touch /tmp/pwned')" }),
    }),
  ];

  it("hands the SDK a traffic access token, and the SDK's context calls work with it", async () => {
    assert.ok(victim.trafficAccessToken, "the create answer carries trafficAccessToken");
    assert.notEqual(victim.trafficAccessToken, await envdToken(victim.sandboxId));
    const c = await victim.createCodeContext();
    await victim.runCode("secret = 'kept'", { context: c });
    assert.ok((await victim.listCodeContexts()).some((x) => x.id === c.id));
    await victim.restartCodeContext(c);
    await victim.removeCodeContext(c);
    assert.ok(!(await victim.listCodeContexts()).some((x) => x.id === c.id));
  });

  it("refuses every context call and cell with only the id (401) or a wrong token (403)", async () => {
    const mine = await victim.createCodeContext();
    await victim.runCode("secret = 'still here'", { context: mine });
    const before = await kernels(victim);
    const none = await Promise.all(attacks(victim.sandboxId, mine.id, {}));
    for (const r of none) {
      assert.equal(r.status, 401, r.text);
      assert.match(r.text, /e2b-traffic-access-token/);
    }
    const wrong: Record<string, string>[] = [
      { "e2b-traffic-access-token": "x".repeat(43) },
      { "x-access-token": "x".repeat(32) },
      { "e2b-traffic-access-token": (await envdToken(victim.sandboxId)).slice(1) },
      { authorization: `Bearer ${s.key}`, "x-api-key": s.key, "e2b-traffic-access-token": s.key },
    ];
    for (const headers of wrong) {
      for (const r of await Promise.all(attacks(victim.sandboxId, mine.id, headers)))
        assert.equal(r.status, 403, `${JSON.stringify(headers)}: ${r.text}`);
    }
    // An id that does not exist gets the same answers: they do not tell which ids are real.
    for (const r of await Promise.all(attacks("nosuchsandbox0000000", mine.id, {})))
      assert.equal(r.status, 401);
    for (const r of await Promise.all(
      attacks("nosuchsandbox0000000", mine.id, { "e2b-traffic-access-token": "x".repeat(43) }),
    ))
      assert.equal(r.status, 403);
    assert.equal(await kernels(victim), before, "no kernel was started or killed");
    assert.equal((await victim.runCode("secret", { context: mine })).text, "still here");
    assert.equal((await victim.commands.run("test -e /tmp/pwned || echo clean")).stdout, "clean\n");
    await victim.removeCodeContext(mine);
  });

  it("does not let another tenant's key or tokens touch the contexts", async () => {
    const mine = await victim.createCodeContext();
    const other = await Sandbox.create(s.opts(keyB));
    try {
      assert.ok(other.trafficAccessToken);
      const foreign: Record<string, string>[] = [
        { "e2b-traffic-access-token": String(other.trafficAccessToken) },
        { "x-access-token": await envdToken(other.sandboxId, keyB) },
        { "x-api-key": keyB, "e2b-traffic-access-token": String(other.trafficAccessToken) },
      ];
      for (const headers of foreign)
        for (const r of await Promise.all(attacks(victim.sandboxId, mine.id, headers)))
          assert.equal(r.status, 403, `${JSON.stringify(headers)}: ${r.text}`);
      // B's own sandbox answers B's token (the refusals above are about whose sandbox it is).
      const own = await raw(`${s.sandboxUrl}/contexts`, {
        headers: at(other.sandboxId, { "e2b-traffic-access-token": String(other.trafficAccessToken) }),
      });
      assert.equal(own.status, 200, own.text);
      assert.ok(
        (await victim.listCodeContexts()).some((x) => x.id === mine.id),
        "A's context is untouched",
      );
    } finally {
      await other.kill();
      await victim.removeCodeContext(mine);
    }
  });

  it("stops 40 parallel creates with a valid token at the bound its memory allows", async () => {
    const sb = await Sandbox.create("code-interpreter-v1");
    try {
      const { memoryMB } = (
        await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}`, { headers: { "x-api-key": s.key } })
      ).json() as { memoryMB: number };
      const MAX_CONTEXTS = contextLimit(memoryMB * 1024 * 1024);
      assert.ok(MAX_CONTEXTS >= 2 && MAX_CONTEXTS < 40, `bound ${MAX_CONTEXTS}`);
      const headers = at(sb.sandboxId, { "e2b-traffic-access-token": String(sb.trafficAccessToken) });
      const all = await Promise.all(
        Array.from({ length: 40 }, () =>
          raw(`${s.sandboxUrl}/contexts`, {
            method: "POST",
            headers,
            body: "{}",
            signal: AbortSignal.timeout(240_000),
          }),
        ),
      );
      const made = all.filter((r) => r.status === 200);
      const refused = all.filter((r) => r.status === 429);
      assert.equal(
        made.length,
        MAX_CONTEXTS,
        all.map((r) => (r.status === 500 ? r.text : r.status)).join(","),
      );
      assert.equal(refused.length, 40 - MAX_CONTEXTS);
      assert.match(refused[0]?.text ?? "", new RegExp(`${MAX_CONTEXTS} code contexts`));
      assert.equal(await kernels(sb), MAX_CONTEXTS, "no more kernel processes than the bound");
      // A cell without a context would start one kernel more: refused as well.
      await assert.rejects(sb.runCode("1", { requestTimeoutMs: 10_000 }), /429|code contexts/);
      assert.equal((await sb.listCodeContexts()).length, MAX_CONTEXTS);
      // Removing one frees its slot.
      const first = made[0]?.json() as { id: string };
      await sb.removeCodeContext(first.id);
      assert.equal(await kernels(sb), MAX_CONTEXTS - 1);
      const again = await sb.createCodeContext();
      assert.equal((await sb.runCode("6 * 7", { context: again })).text, "42");
      assert.equal(await kernels(sb), MAX_CONTEXTS);
    } finally {
      await sb.kill();
    }
  });

  it("writes context creates, restarts and removes to the audit log", async () => {
    const c = await victim.createCodeContext({ cwd: "/tmp" });
    await victim.restartCodeContext(c);
    await victim.removeCodeContext(c);
    const log = (await s.store.auditLog(500, victim.sandboxId)).filter(
      (e) => e.event === "context" && e.detail?.context === c.id,
    );
    assert.deepEqual(
      log.map((e) => e.detail?.op),
      ["create", "restart", "remove"],
    );
    assert.equal(log[0]?.detail?.cwd, "/tmp");
    // Cells racing to start the default context start one kernel, audited once.
    const before = await kernels(victim);
    const cells = await Promise.all([1, 2, 3].map((n) => victim.runCode(`${n} * 2`)));
    assert.deepEqual(
      cells.map((c) => c.text),
      ["2", "4", "6"],
    );
    assert.equal(await kernels(victim), before + 1);
    const defaults = (await s.store.auditLog(500, victim.sandboxId)).filter(
      (e) => e.event === "context" && e.detail?.context === "default",
    );
    assert.deepEqual(
      defaults.map((e) => e.detail?.op),
      ["create"],
    );
    // The tenant reads the same trail through the API.
    const trail = (
      await raw(`${s.apiUrl}/hands/v1/sandboxes/${victim.sandboxId}/audit`, {
        headers: { "x-api-key": s.key },
      })
    ).json() as { entries: Array<{ event: string; detail: { op?: string; context?: string } | null }> };
    assert.ok(
      trail.entries.some(
        (e) => e.event === "context" && e.detail?.op === "create" && e.detail.context === c.id,
      ),
    );
  });

  it("refuses unsecured sandboxes; public traffic opens the sandbox's own ports, never the interpreter's", async () => {
    for (const body of [{ secure: false }, { network: { allowPublicTraffic: "no" } }]) {
      const r = await raw(`${s.apiUrl}/v2/sandboxes`, {
        method: "POST",
        headers: { "x-api-key": s.key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    }
    const ok = await raw(`${s.apiUrl}/v2/sandboxes`, {
      method: "POST",
      headers: { "x-api-key": s.key, "content-type": "application/json" },
      body: JSON.stringify({ secure: true, network: { allowPublicTraffic: false } }),
    });
    assert.equal(ok.status, 201, ok.text);
    const made = ok.json() as { sandboxID: string; trafficAccessToken: string };
    assert.ok(made.trafficAccessToken);
    await Sandbox.kill(made.sandboxID);
    // allowPublicTraffic: true (E2B's getHost ports without a token): the interpreter runs code,
    // so its port still needs the sandbox's token.
    const pub = await Sandbox.create({ network: { allowPublicTraffic: true } });
    try {
      for (const r of await Promise.all(attacks(pub.sandboxId, "python", {})))
        assert.equal(r.status, 401, r.text);
      assert.equal((await pub.commands.run("ls /tmp/pwned 2>/dev/null; echo $?")).stdout.trim(), "2");
    } finally {
      await pub.kill();
    }
  });
});
