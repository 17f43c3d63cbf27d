// Who may use the dashboard: whoever holds the token printed in its URL. The first request with
// ?token= gets it back as an HttpOnly, SameSite=Strict cookie and is redirected to the same page
// without it (so it leaves the address bar); every other request needs the cookie. The Host
// header must name this server (a DNS-rebinding page cannot pass), and a change (POST) must come
// from this origin.
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** Cookies are shared by every port of a host: each dashboard names its own after its port. */
export function cookieName(port: number): string {
  return `hands_dashboard_${port}`;
}

export function newToken(): string {
  return randomBytes(24).toString("base64url");
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function refuse(res: ServerResponse, status: 401 | 403, message: string): false {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
  res.end(`${message}\n`);
  return false;
}

/**
 * True when the request may go on; otherwise it has been answered (401 without a token, 403
 * with a wrong one or from elsewhere, 302 setting the cookie).
 */
export function authorize(req: IncomingMessage, res: ServerResponse, token: string, port: number): boolean {
  const host = req.headers.host ?? "";
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
    return refuse(res, 403, "this dashboard answers only on 127.0.0.1");
  const url = new URL(req.url ?? "/", `http://${host}`);
  const offered = url.searchParams.get("token");
  if (offered !== null) {
    if (!same(offered, token)) return refuse(res, 403, "wrong token: open the URL hands dashboard printed");
    url.searchParams.delete("token");
    res.writeHead(302, {
      "set-cookie": `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`,
      location: `${url.pathname}${url.search}${url.hash}`,
      "cache-control": "no-store",
    });
    res.end();
    return false;
  }
  const cookie = cookieValue(req, cookieName(port));
  if (cookie === undefined) return refuse(res, 401, "no token: open the URL hands dashboard printed");
  if (!same(cookie, token)) return refuse(res, 403, "wrong token: open the URL hands dashboard printed");
  if (req.method !== "GET" && req.method !== "HEAD") {
    const origin = req.headers.origin;
    if (origin !== `http://${host}`)
      return refuse(res, 403, "a change must come from the dashboard's own page");
  }
  return true;
}
