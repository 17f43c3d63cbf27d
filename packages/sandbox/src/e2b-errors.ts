// What went wrong talking to an E2B-protocol service, in words a user (or the model) can act
// on. The SDK's error classes are matched by name: the SDK itself is loaded only when used.

export interface E2BWhere {
  /** The management API address, for "cannot reach" messages. */
  apiUrl: string;
  sandboxId?: string;
}

/** True when the error says the sandbox no longer exists (killed, expired, reaped). */
export function isSandboxGone(e: unknown): boolean {
  const name = (e as Error)?.name ?? "";
  const msg = String((e as Error)?.message ?? "");
  if (name === "SandboxNotFoundError") return true;
  if (name === "NotFoundError" && /sandbox/i.test(msg)) return true;
  return name === "TimeoutError" && /killed|end of life|sandbox timeout/i.test(msg);
}

function causeText(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? "";
}

/** The message for an error from the SDK (or from fetch underneath it). */
export function describeE2BError(e: unknown, where: E2BWhere): string {
  const name = (e as Error)?.name ?? "";
  const msg = String((e as Error)?.message ?? e);
  const box = where.sandboxId ? `E2B sandbox ${where.sandboxId}` : "E2B sandbox";
  if (name === "AuthenticationError" || /\b401\b|unauthori[sz]ed|invalid api key/i.test(msg))
    return `the E2B service at ${where.apiUrl} refused the API key (401: ${msg}); check E2B_API_KEY`;
  if (name === "RateLimitError" || /\b429\b|quota|limit reached|too many/i.test(msg))
    return `the E2B service at ${where.apiUrl} is at its limit for this key (${msg}); wait for sandboxes to end or raise the quota`;
  if (isSandboxGone(e)) return `the ${box} is gone (killed, or its timeout passed): ${msg}`;
  if (
    name === "TemplateError" ||
    ((name === "NotFoundError" || /\b404\b/.test(msg)) && /template/i.test(msg))
  )
    return `the E2B service has no such template (${msg}); choose one with --e2b-template`;
  const cause = causeText(e);
  if (
    /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH|ETIMEDOUT|UND_ERR/.test(cause) ||
    /fetch failed/i.test(msg)
  )
    return `cannot reach the E2B service at ${where.apiUrl} (${cause || msg}); is it running, and are E2B_API_URL / E2B_DOMAIN right?`;
  return `${box}: ${name && name !== "Error" ? `${name}: ` : ""}${msg}`;
}

/** An error carrying a described message (the original stays as its cause). */
export function e2bError(e: unknown, where: E2BWhere): Error {
  return new Error(describeE2BError(e, where), { cause: e });
}
