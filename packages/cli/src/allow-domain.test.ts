// --allow-domain rules are checked when the run starts (exit 2 with the entry and the reason),
// not when the first command needs the proxy.
import assert from "node:assert/strict";
import { test } from "node:test";
import { prepareSandbox } from "@hands/sdk/root";
import { UsageError } from "./args.js";

test("a bad --allow-domain entry is a usage error naming the entry", async () => {
  const lines: string[] = [];
  for (const [entry, reason] of [
    ["https://pypi.org", /not a URL/],
    ["pypi.org:99999", /not a valid port/],
    ["[::1%eth0]", /zone ids/],
  ] as const) {
    await assert.rejects(
      prepareSandbox({ kind: "bwrap", workspace: "/nonexistent", allowDomain: ["github.com", entry] }, (s) =>
        lines.push(s),
      ),
      (e: Error) =>
        e instanceof UsageError &&
        e.message.startsWith(`--allow-domain: allow-list entry "${entry}": `) &&
        reason.test(e.message),
    );
  }
  const ok = await prepareSandbox(
    { kind: "bwrap", workspace: "/nonexistent", allowDomain: ["*.pypi.org", "github.com:8443"] },
    (s) => lines.push(s),
  );
  await ok.close();
  assert.deepEqual(lines, []);
});
