// The dashboard's link is one-time for real and never on a command line: another user of the
// machine reads every process's argv (/proc/PID/cmdline of xdg-open and the browser), and a
// token that still works after the browser used it is a password anyone who saw it keeps.
// A real server and real HTTP requests; the real `hands dashboard` with a recording xdg-open;
// Debian's Chromium following the file it is given.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { cookieName } from "../auth.js";
import { startDashboard } from "../server.js";
import { launchBrowser } from "../testing/browser.js";
import { HANDS_BIN, handsEnv } from "../testing/hands-cli.js";

const scratch = mkdtempSync(join(tmpdir(), "hands-dash-link-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A GET with exactly these headers (fetch will not send another Host). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; setCookie: string[] | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, setCookie: res.headers["set-cookie"] }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The link inside an opener file. */
function linkIn(file: string): string {
  const m = /http-equiv="refresh" content="0;url=(http:[^"]+)"/.exec(readFileSync(file, "utf8"));
  assert.ok(m, `no link in ${file}`);
  return m[1]!.replaceAll("&#38;", "&");
}

describe("the dashboard's one-time link", () => {
  test("used once: the second use (without the cookie) gets 403 and no cookie; the cookie is not the token", async () => {
    const dash = await startDashboard({ dataDir: join(scratch, "reuse") });
    try {
      const first = await fetch(dash.openUrl, { redirect: "manual" });
      assert.equal(first.status, 200);
      const setCookie = first.headers.get("set-cookie") ?? "";
      const m = new RegExp(`^${cookieName(dash.port)}=([\\w-]+); HttpOnly; SameSite=Strict; Path=/$`).exec(
        setCookie,
      );
      assert.ok(m, setCookie);
      const session = m[1]!;
      assert.notEqual(session, dash.token, "the cookie is a secret of its own, not the link's token");
      assert.match(
        await first.text(),
        /http-equiv="refresh" content="0;url=\/"/,
        "moves on without the token",
      );

      for (let i = 0; i < 2; i++) {
        const again = await fetch(dash.openUrl, { redirect: "manual" });
        assert.equal(again.status, 403, "a second use is refused");
        assert.equal(again.headers.get("set-cookie"), null, "and given no cookie");
      }
      // With a token-bearing cookie (what the old cookie was) nothing opens either.
      const tokenCookie = await fetch(`${dash.url}api/runs`, {
        headers: { cookie: `${cookieName(dash.port)}=${dash.token}` },
      });
      assert.equal(tokenCookie.status, 403);
      const signedIn = await fetch(`${dash.url}api/runs`, {
        headers: { cookie: `${cookieName(dash.port)}=${session}` },
      });
      assert.equal(signedIn.status, 200);
      // The signed-in browser reloading the link is sent on, given nothing new.
      const reload = await fetch(dash.openUrl, {
        redirect: "manual",
        headers: { cookie: `${cookieName(dash.port)}=${session}` },
      });
      assert.deepEqual(
        [reload.status, reload.headers.get("location"), reload.headers.get("set-cookie")],
        [302, "/", null],
      );
    } finally {
      await dash.close();
    }
  });

  test("another Host (DNS rebinding) or another Origin is refused, and does not use the link up", async () => {
    const dash = await startDashboard({ dataDir: join(scratch, "host") });
    try {
      const link = new URL(dash.openUrl);
      for (const host of [
        "evil.example",
        `evil.example:${dash.port}`,
        `127.0.0.1:${dash.port + 1}`,
        "127.0.0.1",
      ]) {
        const r = await rawGet(dash.openUrl, { host });
        assert.equal(r.status, 403, host);
        assert.equal(r.setCookie, undefined, host);
      }
      const fromElsewhere = await rawGet(dash.openUrl, { host: link.host, origin: "http://evil.example" });
      assert.equal(fromElsewhere.status, 403);
      assert.equal(fromElsewhere.setCookie, undefined);
      const first = await fetch(dash.openUrl, { redirect: "manual" });
      assert.equal(first.status, 200, "the link still works for its user");
      const session = /=([\w-]+);/.exec(first.headers.get("set-cookie") ?? "")![1]!;
      const cookie = `${cookieName(dash.port)}=${session}`;
      assert.equal((await rawGet(`${dash.url}api/runs`, { host: "evil.example", cookie })).status, 403);
      assert.equal(
        (await rawGet(`${dash.url}api/runs`, { host: link.host, cookie, origin: "http://evil.example" }))
          .status,
        403,
      );
      assert.equal(
        (await rawGet(`${dash.url}api/runs`, { host: `localhost:${dash.port}`, cookie })).status,
        200,
      );
    } finally {
      await dash.close();
    }
  });

  test("hands dashboard gives xdg-open a 0600 file, never the token; the file goes once it is used", async () => {
    const bin = join(scratch, "fake-bin");
    const argvFile = join(scratch, "xdg-open.argv");
    mkdirSync(bin, { recursive: true });
    // Records its arguments, one a line, as the real opener would receive them.
    writeFileSync(
      join(bin, "xdg-open"),
      `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > ${argvFile}\n`,
    );
    chmodSync(join(bin, "xdg-open"), 0o755);
    const env = handsEnv(join(scratch, "cli"), { PATH: `${bin}:${process.env.PATH}` });
    const child = spawn(process.execPath, [HANDS_BIN, "dashboard"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const exited = new Promise((r) => child.once("exit", r));
    try {
      const until = async (what: string, check: () => boolean) => {
        for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
        assert.ok(check(), `${what}: ${out} ${err}`);
      };
      await until(
        "the dashboard starts and opens the browser",
        () => /Open it with: /.test(out) && existsSync(argvFile),
      );
      const fileUrl = /Open it with: (file:\/\/\S+)/.exec(out)![1]!;
      const file = fileURLToPath(fileUrl);
      assert.equal(statSync(file).mode & 0o777, 0o600, "the file is the user's alone");
      assert.equal(statSync(join(file, "..")).mode & 0o777, 0o700, "in a private folder");
      const link = linkIn(file);
      const token = new URL(link).searchParams.get("token")!;
      assert.ok(token.length >= 32);
      const argv = readFileSync(argvFile, "utf8").trim().split("\n");
      assert.deepEqual(argv, [fileUrl], "xdg-open is given the file");
      assert.ok(!argv.join(" ").includes(token), "the token is on no command line");
      assert.ok(!out.includes(token) && !err.includes(token), "nor printed");

      assert.equal((await fetch(link, { redirect: "manual" })).status, 200);
      assert.ok(!existsSync(file), "the file is removed once the link is used");
      assert.equal((await fetch(link, { redirect: "manual" })).status, 403);
    } finally {
      child.kill("SIGTERM");
      assert.equal(await exited, 0);
    }
  });

  test("a real browser given the file lands on the dashboard signed in; a second browser given it does not", async () => {
    const dash = await startDashboard({ dataDir: join(scratch, "browser") });
    const browser = await launchBrowser();
    const other = await launchBrowser();
    try {
      const { page } = browser;
      await page.goto(dash.openFile.url);
      await page.waitForURL(dash.url);
      await page.waitForSelector("#root *", { timeout: 15_000 });
      const api = await page.evaluate(async () => (await fetch("/api/runs")).status);
      assert.equal(api, 200, "the page's own requests carry the session");
      const [cookie] = await browser.context.cookies(dash.url);
      assert.deepEqual(
        [cookie?.name, cookie?.httpOnly, cookie?.sameSite],
        [cookieName(dash.port), true, "Strict"],
      );

      const second = await other.page.goto(dash.openUrl);
      assert.equal(second?.status(), 403, "the link is used up");
      assert.deepEqual(await other.context.cookies(dash.url), []);
      assert.deepEqual(browser.errors, []);
    } finally {
      await other.close();
      await browser.close();
      await dash.close();
    }
  });
});
