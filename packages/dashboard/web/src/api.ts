// Calls to the dashboard's own server (same origin; the token cookie goes along by itself).
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function errorOf(r: Response): Promise<ApiError> {
  const text = await r.text();
  let message = text;
  try {
    message = (JSON.parse(text) as { error?: string }).error ?? text;
  } catch {}
  return new ApiError(r.status, message || `HTTP ${r.status}`);
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const r = await fetch(path, { signal: signal ?? null, credentials: "same-origin" });
  if (!r.ok) throw await errorOf(r);
  return (await r.json()) as T;
}

export async function getText(path: string): Promise<string> {
  const r = await fetch(path, { credentials: "same-origin" });
  if (!r.ok) throw await errorOf(r);
  return r.text();
}

export async function post<T>(path: string): Promise<T> {
  const r = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  if (!r.ok) throw await errorOf(r);
  return (await r.json()) as T;
}

export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}
