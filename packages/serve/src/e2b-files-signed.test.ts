// File metadata (envd 0.6.2: X-Metadata-* headers kept as user.e2b.* xattrs) and signed /files
// URLs (downloadUrl / uploadUrl), through the official `e2b` SDK against `hands serve` on bwrap —
// and the attacks on the signatures: forged, expired, another path, operation, user or sandbox.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { Sandbox } from "e2b";
import { raw, startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

/** The URL with one query parameter changed. */
function withParam(u: string, name: string, value: string): string {
  const url = new URL(u);
  url.searchParams.set(name, value);
  return url.toString();
}

describe("file metadata and signed URLs through the e2b SDK (bwrap)", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  let sb: Sandbox;
  let other: Sandbox;

  before(async () => {
    s = await startTestServe();
    [sb, other] = await Promise.all([Sandbox.create(), Sandbox.create()]);
  });
  after(async () => {
    await Promise.all([sb?.kill().catch(() => {}), other?.kill().catch(() => {})]);
    await s?.stop();
  });

  it("keeps file metadata: write returns it, getInfo and list show it, each write replaces it", async () => {
    const w = await sb.files.write("meta/a.txt", "alpha", { metadata: { owner: "ann", Stage: "draft" } });
    assert.deepEqual(w.metadata, { owner: "ann", stage: "draft" }, "keys are lowercased as envd does");
    assert.deepEqual((await sb.files.getInfo("meta/a.txt")).metadata, { owner: "ann", stage: "draft" });
    const many = await sb.files.write(
      [
        { path: "meta/b.txt", data: "b" },
        { path: "meta/c.txt", data: "c" },
      ],
      { metadata: { batch: "7" } },
    );
    assert.deepEqual(
      many.map((e) => e.metadata),
      [{ batch: "7" }, { batch: "7" }],
      "every file of one upload gets the same metadata",
    );
    const listed = await sb.files.list("meta");
    assert.deepEqual(
      listed.map((e) => [e.name, e.metadata]),
      [
        ["a.txt", { owner: "ann", stage: "draft" }],
        ["b.txt", { batch: "7" }],
        ["c.txt", { batch: "7" }],
      ],
    );
    await sb.files.write("meta/a.txt", "alpha 2", { metadata: { stage: "final" } });
    assert.deepEqual((await sb.files.getInfo("meta/a.txt")).metadata, { stage: "final" }, "owner is gone");
    await sb.files.write("meta/a.txt", "alpha 3", { useOctetStream: true } as never);
    assert.equal(
      (await sb.files.getInfo("meta/a.txt")).metadata,
      undefined,
      "a write without metadata clears it",
    );
    assert.equal(await sb.files.read("meta/a.txt"), "alpha 3");
    // The sandbox's own tools see the same attributes (they are real xattrs, not a side table).
    const r = await sb.commands.run(
      `python3 -c "import os; print(sorted(os.listxattr('/home/user/meta/b.txt')))"`,
    );
    assert.equal(r.stdout.trim(), "['user.e2b.batch']");
  });

  it("refuses metadata envd refuses: non-ASCII, over-long keys, more than 4 KiB", async () => {
    const info = await sb.getInfo();
    const h = {
      "X-Access-Token": (sb as unknown as { envdAccessToken: string }).envdAccessToken,
      "E2b-Sandbox-Id": info.sandboxId,
    };
    const up = (headers: Record<string, string>) =>
      raw(`${s.sandboxUrl}/files?path=meta/bad.txt`, {
        method: "POST",
        headers: { ...h, "content-type": "application/octet-stream", ...headers },
        body: "x",
      });
    const bad: Array<Record<string, string>> = [
      { "X-Metadata-k": "caf\u00e9" },
      { [`X-Metadata-${"k".repeat(247)}`]: "v" },
      { "X-Metadata-a": "v".repeat(2100), "X-Metadata-b": "v".repeat(2100) },
    ];
    for (const headers of bad) {
      const r = await up(headers);
      assert.equal(r.status, 400, `${Object.keys(headers)[0]?.slice(0, 20)}: ${r.text}`);
    }
    assert.equal(await sb.files.exists("meta/bad.txt"), false, "nothing was written for a refused upload");
  });

  it("serves signed download and upload URLs without any token, as envd does", async () => {
    await sb.files.write("signed/in.txt", "signed content");
    const dl = await sb.downloadUrl("/home/user/signed/in.txt");
    assert.match(dl, /signature=v1_/);
    const got = await raw(dl);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.text, "signed content");
    const timed = await sb.downloadUrl("/home/user/signed/in.txt", { useSignatureExpiration: 120 });
    assert.equal((await raw(timed)).text, "signed content");

    const ul = await sb.uploadUrl("/home/user/signed/up.txt", { useSignatureExpiration: 120 });
    const form = new FormData();
    form.append("file", new Blob(["uploaded via signed url"]), "up.txt");
    const put = await raw(ul, { method: "POST", body: form });
    assert.equal(put.status, 200, put.text);
    assert.equal(await sb.files.read("signed/up.txt"), "uploaded via signed url");
    // As envd: a part named "file" without a file name (a plain form field) is the content too.
    const fieldUrl = await sb.uploadUrl("signed/field.txt");
    const fieldForm = new FormData();
    fieldForm.append("file", "sent as a form field");
    const viaField = await raw(fieldUrl, { method: "POST", body: fieldForm });
    assert.equal(viaField.status, 200, viaField.text);
    assert.deepEqual(viaField.json(), [
      { name: "field.txt", type: "file", path: "/home/user/signed/field.txt" },
    ]);
    assert.equal(await sb.files.read("signed/field.txt"), "sent as a form field");
  });

  it("refuses forged, expired and re-aimed signatures", async () => {
    await sb.files.write("signed/secret.txt", "only for the holder");
    await other.files.write("signed/secret.txt", "the other sandbox's");
    const dl = await sb.downloadUrl("/home/user/signed/secret.txt", { useSignatureExpiration: 120 });
    const sig = new URL(dl).searchParams.get("signature") as string;
    const flipped = sig.slice(0, -1) + (sig.endsWith("A") ? "B" : "A");
    const expiredUrl = await sb.downloadUrl("/home/user/signed/secret.txt", { useSignatureExpiration: -5 });
    const exp = Number(new URL(dl).searchParams.get("signature_expiration"));
    const attacks: Array<[string, string, { method: string; body: FormData }?]> = [
      ["forged signature", withParam(dl, "signature", flipped)],
      ["no v1_ prefix", withParam(dl, "signature", sig.slice(3))],
      ["another path", withParam(dl, "path", "/home/user/signed/in.txt")],
      ["a relative spelling of the path", withParam(dl, "path", "signed/secret.txt")],
      ["another user", withParam(dl, "username", "root")],
      ["a later expiration", withParam(dl, "signature_expiration", String(exp + 3600))],
      [
        "the expiration dropped",
        (() => {
          const u = new URL(dl);
          u.searchParams.delete("signature_expiration");
          return u.toString();
        })(),
      ],
      ["a read signature used to write", dl, { method: "POST", body: new FormData() }],
      ["expired", expiredUrl],
    ];
    for (const [what, url, init] of attacks) {
      const r = await raw(url, init);
      assert.equal(r.status, 401, `${what}: ${r.status} ${r.text}`);
      assert.doesNotMatch(r.text, /only for the holder/);
    }
    assert.match((await raw(expiredUrl)).text, /expired/);
    // The right signature aimed at another sandbox (its id in the header): that sandbox's token
    // did not make it.
    const aimed = await raw(dl, { headers: { "E2b-Sandbox-Id": other.sandboxId } });
    assert.equal(aimed.status, 401, aimed.text);
    assert.doesNotMatch(aimed.text, /other sandbox/);
    // A signature opens /files only, never the process API.
    const u = new URL(dl);
    const rpc = await raw(`${s.sandboxUrl}/process.Process/List${u.search}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(rpc.status, 401, rpc.text);
    // A wrong token in the header is not saved by a right signature (envd: the header wins).
    const wrongToken = await raw(dl, { headers: { "X-Access-Token": "x".repeat(32) } });
    assert.equal(wrongToken.status, 403, wrongToken.text);
    // The genuine URL still works after all that, and stops working when its sandbox is gone.
    assert.equal((await raw(dl)).text, "only for the holder");
    const doomed = await Sandbox.create();
    await doomed.files.write("x.txt", "gone soon");
    const doomedUrl = await doomed.downloadUrl("/home/user/x.txt");
    assert.equal((await raw(doomedUrl)).text, "gone soon");
    await doomed.kill();
    assert.equal((await raw(doomedUrl)).status, 401);
  });
});
