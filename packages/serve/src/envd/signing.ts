// Signed /files URLs (the SDK's downloadUrl / uploadUrl), checked as E2B's envd checks them: the
// URL carries no access token, only `signature` = "v1_" + unpadded base64 of
// sha256("path:operation:username:envdAccessToken[:expiration]") and, optionally,
// `signature_expiration` (Unix seconds). The signature binds the path, the operation (GET = read,
// POST = write), the user and the sandbox (its token): changing any of them breaks it.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { SandboxRow } from "../store.js";
import { HttpError } from "./files.js";

export function fileSignature(
  path: string,
  operation: "read" | "write",
  username: string,
  envdToken: string,
  expiration?: number,
): string {
  const parts = [path, operation, username, envdToken];
  if (expiration !== undefined) parts.push(String(expiration));
  return `v1_${createHash("sha256").update(parts.join(":")).digest("base64").replace(/=+$/, "")}`;
}

/** Whether a request is a signed /files request (no token of its own, a signature in the URL). */
export function isSignedFilesRequest(url: URL): boolean {
  return url.pathname === "/files" && url.searchParams.has("signature");
}

export interface SignedRequest {
  /** The signed fields, as the URL gives them. */
  path: string;
  operation: "read" | "write";
  username: string;
  expiration: number | undefined;
  signature: string;
}

/** The signed fields of a request, or a 401 for one that cannot be a valid signed request. */
export function signedRequestOf(req: IncomingMessage, url: URL): SignedRequest {
  const operation = req.method === "GET" ? "read" : req.method === "POST" ? "write" : undefined;
  if (!operation) throw new HttpError(405, "method not allowed");
  const signature = url.searchParams.get("signature") ?? "";
  const rawExp = url.searchParams.get("signature_expiration");
  if (rawExp !== null && !/^\d{1,12}$/.test(rawExp))
    throw new HttpError(401, "signature_expiration must be a Unix time in seconds");
  if (!signature.startsWith("v1_") || signature.length > 128) throw new HttpError(401, "invalid signature");
  return {
    path: url.searchParams.get("path") ?? "",
    operation,
    username: url.searchParams.get("username") ?? "",
    expiration: rawExp === null ? undefined : Number(rawExp),
    signature,
  };
}

/** Whether the signature was made with this sandbox's token (constant time). */
export function signedBy(s: SignedRequest, row: SandboxRow): boolean {
  const expected = Buffer.from(fileSignature(s.path, s.operation, s.username, row.token, s.expiration));
  const given = Buffer.from(s.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * The sandbox whose token made the signature: `named` when the request names its sandbox
 * (header or Host), else the first of the running ones that matches. A signature that matches
 * none is refused, and so is an expired one — after the match, as envd does, so the answer
 * never says whether a forged signature would have been expired.
 */
export function admitSigned(
  s: SignedRequest,
  candidates: Iterable<SandboxRow>,
  now = Date.now(),
): SandboxRow {
  let found: SandboxRow | undefined;
  for (const row of candidates)
    if (signedBy(s, row)) {
      found = row;
      break;
    }
  if (!found) throw new HttpError(401, "invalid signature");
  if (s.expiration !== undefined && s.expiration < Math.floor(now / 1000))
    throw new HttpError(401, "signature is already expired");
  return found;
}
