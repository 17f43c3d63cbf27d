// Who may use the dashboard: whoever opened its one-time link. That link (?token=) is used once:
// the first request with it gets a session cookie (HttpOnly, SameSite=Strict, named after the
// port: cookies are shared by every port of a host) and a page that moves on to the same URL
// without the token; any later use of it is refused and sets nothing. Every other request needs
// the cookie. The Host header must name this server (a DNS-rebinding page cannot pass), and a
// request that says where it comes from (Origin) must come from this origin.
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

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A page that moves on to `url` (a navigation of its own: the SameSite cookie goes with it). */
export function movingOnPage(url: string, text: string): string {
  const href = escapeHtml(url);
  return `<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${href}"><title>Hands dashboard</title></head>
<body><p><a href="${href}">${escapeHtml(text)}</a></p></body></html>
`;
}

export class DashboardAuth {
  /** The one-time token of the link the user opens. */
  readonly token = newToken();
  /** The session cookie's value: given out once, in exchange for the token. */
  readonly session = newToken();
  private used = false;

  /** `onTokenUsed`: called when the token has been exchanged (it is worth nothing after). */
  constructor(private readonly onTokenUsed: () => void = () => {}) {}

  get tokenUsed(): boolean {
    return this.used;
  }

  /**
   * True when the request may go on; otherwise it has been answered (401 without a cookie, 403
   * with a wrong one, a used token or from elsewhere, the moving-on page for the token).
   */
  authorize(req: IncomingMessage, res: ServerResponse, port: number): boolean {
    const host = req.headers.host ?? "";
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
      return refuse(res, 403, "this dashboard answers only on 127.0.0.1");
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`)
      return refuse(res, 403, "a request must come from the dashboard's own page");
    const url = new URL(req.url ?? "/", `http://${host}`);
    const cookie = cookieValue(req, cookieName(port));
    const signedIn = cookie !== undefined && same(cookie, this.session);
    const offered = url.searchParams.get("token");
    if (offered !== null) {
      url.searchParams.delete("token");
      const rest = `${url.pathname}${url.search}`;
      if (!same(offered, this.token))
        return refuse(res, 403, "wrong token: open the link hands dashboard printed");
      if (this.used) {
        // The same browser again (a reload): on to the page, nothing new given.
        if (signedIn) {
          res.writeHead(302, { location: rest, "cache-control": "no-store" });
          res.end();
          return false;
        }
        return refuse(res, 403, "this one-time link was used already: restart hands dashboard for a new one");
      }
      this.used = true;
      this.onTokenUsed();
      // Not a redirect: after a link followed from elsewhere (the file the browser was given),
      // a SameSite=Strict cookie is not sent along a redirect; the page's own navigation sends it.
      res.writeHead(200, {
        "set-cookie": `${cookieName(port)}=${this.session}; HttpOnly; SameSite=Strict; Path=/`,
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "content-security-policy": "default-src 'none'",
      });
      res.end(movingOnPage(rest, "Open the dashboard"));
      return false;
    }
    if (cookie === undefined) return refuse(res, 401, "not signed in: open the link hands dashboard printed");
    if (!signedIn) return refuse(res, 403, "wrong session: open the link hands dashboard printed");
    if (req.method !== "GET" && req.method !== "HEAD" && origin === undefined)
      return refuse(res, 403, "a change must come from the dashboard's own page");
    return true;
  }
}
