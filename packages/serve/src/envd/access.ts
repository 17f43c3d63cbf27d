// Who may use a sandbox's data plane, as E2B's secured sandboxes without public traffic have it:
// envd's port needs the sandbox's envdAccessToken (X-Access-Token); every other port (the code
// interpreter's 49999) needs its trafficAccessToken (e2b-traffic-access-token) — or the envd
// token, the stronger of the two. No port is open on the sandbox id alone: ids show up in
// places a token never does (process lists, logs, URLs).
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const ENVD_PORT = 49983;
export const INTERPRETER_PORT = 49999;

export const TRAFFIC_TOKEN_HEADER = "e2b-traffic-access-token";

/**
 * A sandbox's traffic access token, derived from its envd token (one-way: the traffic token,
 * which goes to every port's service, cannot give back the envd token that runs commands).
 */
export function trafficTokenOf(envdToken: string): string {
  return createHash("sha256")
    .update("hands-serve traffic access token\0")
    .update(envdToken)
    .digest("base64url");
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

function same(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The tokens a request offers for its port (none: it cannot be let in, whatever the sandbox). */
export function offeredTokens(req: IncomingMessage, port: number): string[] {
  const envd = header(req, "x-access-token");
  const traffic = port === ENVD_PORT ? undefined : header(req, TRAFFIC_TOKEN_HEADER);
  return [envd, traffic].filter((t): t is string => t !== undefined);
}

/** Whether one of the offered tokens is the sandbox's for that port. */
export function tokenAdmits(offered: string[], port: number, envdToken: string): boolean {
  if (offered.length === 0) return false;
  const traffic = port === ENVD_PORT ? undefined : trafficTokenOf(envdToken);
  return offered.some((t) => same(t, envdToken) || (traffic !== undefined && same(t, traffic)));
}

export function missingTokenMessage(port: number): string {
  return port === ENVD_PORT
    ? "the sandbox's access token is missing: send its envdAccessToken in X-Access-Token"
    : `port ${port} of the sandbox needs its traffic access token: send its trafficAccessToken in the '${TRAFFIC_TOKEN_HEADER}' header (or its envdAccessToken in X-Access-Token)`;
}
