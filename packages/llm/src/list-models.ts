// GET {baseUrl}/models of an OpenAI-compatible endpoint, and when it fails, why — in words a
// user can act on: the key was refused (401/403), nothing listens there (connection refused),
// no answer in time, an answer that is not a model list (the base URL is wrong). Used to pick a
// model when none is given, and to list the models an endpoint has when it refuses a name (404).
import { nodeFetch } from "./http-fetch.js";
import { classifyError } from "./retry.js";

export type ModelListProblem =
  | "unauthorized"
  | "not-found"
  | "http"
  | "refused"
  | "unreachable"
  | "timeout"
  | "garbage";

export type ModelList =
  | { ok: true; models: string[] }
  | { ok: false; problem: ModelListProblem; status?: number; message: string };

export interface ModelListOptions {
  apiKey?: string;
  /** Default 1500 ms. */
  timeoutMs?: number;
  /** What set the key, for the message when it is refused ("OPENAI_API_KEY", "--api-key"). */
  keySource?: string;
  /** What set the base URL, for the message when nothing answers there. */
  urlSource?: string;
}

/** The models `baseUrl` lists, or what went wrong asking (never throws). */
export async function fetchModelList(baseUrl: string, options: ModelListOptions = {}): Promise<ModelList> {
  const root = baseUrl.replace(/\/+$/, "");
  const url = `${root}/models`;
  const timeoutMs = options.timeoutMs ?? 1500;
  const from = options.urlSource ? ` (base URL from ${options.urlSource})` : "";
  let res: Response;
  let text: string;
  try {
    const signal = AbortSignal.timeout(timeoutMs);
    res = await nodeFetch(url, {
      signal,
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    });
    text = await res.text();
  } catch (err) {
    const name = (err as Error)?.name;
    if (name === "TimeoutError" || name === "AbortError")
      return {
        ok: false,
        problem: "timeout",
        message: `${url} did not answer within ${formatSeconds(timeoutMs)}${from}; is the server up and is that its address?`,
      };
    const info = classifyError(err);
    if (info.code === "ECONNREFUSED")
      return {
        ok: false,
        problem: "refused",
        message: `nothing listens at ${root} (connection refused)${from}; start the server, or set the base URL it listens on`,
      };
    if (info.kind === "timeout")
      return {
        ok: false,
        problem: "timeout",
        message: `${url} did not answer in time (${info.message})${from}`,
      };
    return { ok: false, problem: "unreachable", message: `cannot reach ${root}: ${info.message}${from}` };
  }
  if (res.status === 401 || res.status === 403) {
    const key = options.apiKey
      ? `the API key${options.keySource ? ` from ${options.keySource}` : ""} is refused`
      : "it needs an API key and none is set";
    return {
      ok: false,
      problem: "unauthorized",
      status: res.status,
      message: `${root} answered HTTP ${res.status}: ${key}${serverSays(text)}; check OPENAI_API_KEY or --api-key`,
    };
  }
  if (res.status === 404)
    return {
      ok: false,
      problem: "not-found",
      status: 404,
      message: `${url} does not exist (HTTP 404)${from}; is the base URL right (it usually ends in /v1)?`,
    };
  if (!res.ok)
    return {
      ok: false,
      problem: "http",
      status: res.status,
      message: `${url} answered HTTP ${res.status}${serverSays(text)}`,
    };
  let body: { data?: { id?: unknown }[] } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  if (!Array.isArray(body?.data))
    return {
      ok: false,
      problem: "garbage",
      status: res.status,
      message: `${url} answered, but not with an OpenAI-style model list (${snippet(text)})${from}; is it an OpenAI-compatible endpoint, and the base URL right (usually …/v1)?`,
    };
  return {
    ok: true,
    models: body.data.map((m) => m?.id).filter((id): id is string => typeof id === "string"),
  };
}

/** The models as one short phrase: the first `max` names, and how many more. */
export function listedModels(models: readonly string[], max = 20): string {
  const shown = models.slice(0, max).join(", ");
  return models.length > max ? `${shown} and ${models.length - max} more` : shown;
}

function serverSays(text: string): string {
  let message = "";
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof body.error === "string" ? body.error : (body.error?.message ?? body.message);
    if (typeof m === "string") message = m;
  } catch {
    message = "";
  }
  return message ? ` ("${snippet(message)}")` : "";
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (!flat) return "an empty body";
  // Printable: a binary or HTML answer must not garble the terminal.
  const clean = flat.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
  return clean.length > 80 ? `${clean.slice(0, 79)}…` : clean;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
