// Hooks: code of the user's that runs at fixed points of a run — before a tool runs (it may
// refuse the call with a reason, or change its arguments), after it ran (it may add to what the
// model reads), when a session starts and ends, and when the model finishes. A hook that throws,
// stalls past its timeout or answers nonsense is reported and skipped: it never ends the run.

export type HookEventName = "preToolUse" | "postToolUse" | "sessionStart" | "sessionEnd" | "stop";
export const HOOK_EVENTS: readonly HookEventName[] = [
  "preToolUse",
  "postToolUse",
  "sessionStart",
  "sessionEnd",
  "stop",
];

/** What each hook is told (the JSON a hook command reads on stdin, with `event` set). */
export interface HookInputs {
  preToolUse: { tool: string; callId: string; step: number; args: Record<string, unknown> };
  postToolUse: {
    tool: string;
    callId: string;
    step: number;
    args: Record<string, unknown>;
    output: string;
    isError: boolean;
  };
  sessionStart: { sessionId: string; workspace: string };
  sessionEnd: { sessionId: string; workspace: string };
  stop: { status: string; answer: string; steps: number };
}

/**
 * What a hook may answer (nothing: carry on). Which fields count depends on the event:
 * preToolUse `deny` (the call is not run; the reason is what the model reads) or `args` (the
 * call runs with these instead: validated against the tool's schema and judged by the approvals
 * again); postToolUse `addContext` (appended to the result); stop `continue` (the run goes on
 * with this as the next user message); sessionStart `addContext` (added to the instructions).
 */
export interface HookAnswer {
  deny?: string;
  args?: Record<string, unknown>;
  addContext?: string;
  continue?: string;
}

export type HookFunction<E extends HookEventName = HookEventName> = (
  input: HookInputs[E] & { event: E },
  signal: AbortSignal,
) => HookResult | Promise<HookResult>;

/** A hook's answer; nothing (undefined, or a function that returns nothing) means carry on. */
// biome-ignore lint/suspicious/noConfusingVoidType: lets a hook be a function that returns nothing
export type HookResult = HookAnswer | undefined | void;

/** One hook: a function, with the tools it applies to (a regular expression of tool names; default all). */
export interface Hook<E extends HookEventName = HookEventName> {
  /** How reports name it (a command line, a function's name). */
  name: string;
  run: HookFunction<E>;
  /** For preToolUse / postToolUse: which tools (a regular expression matched against the whole name). */
  matcher?: string;
  /** Milliseconds before it is abandoned (default 30 s). */
  timeoutMs?: number;
}

export type Hooks = { [E in HookEventName]?: Hook<E>[] };

/** What became of one hook's run, for the event stream (a failing hook is reported this way). */
export interface HookOutcome {
  hook: string;
  event: HookEventName;
  outcome: "ok" | "denied" | "changed" | "added" | "continued" | "failed";
  message?: string;
}

export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
const ANSWER_KEYS = ["deny", "args", "addContext", "continue"];
/** Text a hook adds is capped: it goes to the model with every later request. */
const MAX_HOOK_TEXT = 10_000;

/** Whether a hook with `matcher` applies to `tool` (an invalid expression matches nothing; it is reported when the hooks are built). */
export function hookMatches(matcher: string | undefined, tool: string): boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return true;
  try {
    return new RegExp(`^(?:${matcher})$`).test(tool);
  } catch {
    return false;
  }
}

/** `value` as a HookAnswer, or a description of what is wrong with it. */
export function checkHookAnswer(
  value: unknown,
): { ok: true; answer: HookAnswer } | { ok: false; error: string } {
  if (value === undefined || value === null) return { ok: true, answer: {} };
  if (typeof value !== "object" || Array.isArray(value))
    return { ok: false, error: `the answer must be a JSON object, got ${typeof value}` };
  const v = value as Record<string, unknown>;
  const unknown = Object.keys(v).filter((k) => !ANSWER_KEYS.includes(k));
  if (unknown.length)
    return {
      ok: false,
      error: `unknown answer field(s) ${unknown.join(", ")} (known: ${ANSWER_KEYS.join(", ")})`,
    };
  for (const key of ["deny", "addContext", "continue"] as const)
    if (v[key] !== undefined && (typeof v[key] !== "string" || !(v[key] as string).trim()))
      return { ok: false, error: `"${key}" must be a non-empty string` };
  if (v.args !== undefined && (typeof v.args !== "object" || v.args === null || Array.isArray(v.args)))
    return { ok: false, error: `"args" must be a JSON object` };
  const answer: HookAnswer = {};
  if (v.deny !== undefined) answer.deny = cap(v.deny as string);
  if (v.args !== undefined) answer.args = v.args as Record<string, unknown>;
  if (v.addContext !== undefined) answer.addContext = cap(v.addContext as string);
  if (v.continue !== undefined) answer.continue = cap(v.continue as string);
  return { ok: true, answer };
}

function cap(text: string): string {
  return text.length > MAX_HOOK_TEXT ? `${text.slice(0, MAX_HOOK_TEXT)}… [cut by Hands]` : text;
}

/**
 * Runs the hooks of `event` that apply (in order), each within its timeout and the run's signal.
 * Returns each one's checked answer, and reports every outcome (failures included) to `report`.
 */
export async function runHooks<E extends HookEventName>(
  hooks: Hooks | undefined,
  event: E,
  input: HookInputs[E],
  signal: AbortSignal,
  report: (o: HookOutcome) => void,
): Promise<{ hook: Hook<E>; answer: HookAnswer }[]> {
  const list = (hooks?.[event] ?? []) as Hook<E>[];
  const tool = (input as { tool?: string }).tool;
  const out: { hook: Hook<E>; answer: HookAnswer }[] = [];
  for (const hook of list) {
    if (tool !== undefined && !hookMatches(hook.matcher, tool)) continue;
    if (signal.aborted) break;
    const result = await runOne(hook, event, input, signal);
    if (!result.ok) {
      report({ hook: hook.name, event, outcome: "failed", message: result.error });
      continue;
    }
    out.push({ hook, answer: result.answer });
  }
  return out;
}

async function runOne<E extends HookEventName>(
  hook: Hook<E>,
  event: E,
  input: HookInputs[E],
  parent: AbortSignal,
): Promise<{ ok: true; answer: HookAnswer } | { ok: false; error: string }> {
  const timeoutMs = hook.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new Error("timeout"));
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const value = await Promise.race([
      Promise.resolve().then(() => hook.run({ ...input, event }, controller.signal)),
      timeout,
    ]);
    return checkHookAnswer(value);
  } catch (err) {
    return { ok: false, error: (err as Error)?.message ?? String(err) };
  } finally {
    clearTimeout(timer);
    parent.removeEventListener("abort", onAbort);
  }
}

/** The hook functions given as one function or a list, as Hooks (the SDK's form). */
export function hooksFromFunctions(
  given: { [E in HookEventName]?: HookFunction<E> | HookFunction<E>[] },
): Hooks {
  const hooks: Hooks = {};
  for (const event of HOOK_EVENTS) {
    const value = given[event] as HookFunction | HookFunction[] | undefined;
    if (value === undefined) continue;
    const fns = Array.isArray(value) ? value : [value];
    for (const [i, fn] of fns.entries()) {
      if (typeof fn !== "function") throw new TypeError(`hooks.${event}[${i}] must be a function`);
      // An arrow function in { preToolUse: (e) => … } is named after the key: no help in a report.
      const name = fn.name && fn.name !== event ? fn.name : `${event}#${i + 1}`;
      const list = (hooks[event] ?? []) as Hook[];
      list.push({ name, run: fn as HookFunction });
      hooks[event] = list as never;
    }
  }
  return hooks;
}

/** Both sets, `a`'s hooks first. */
export function mergeHooks(a: Hooks | undefined, b: Hooks | undefined): Hooks {
  const out: Hooks = {};
  for (const event of HOOK_EVENTS) {
    const list = [...(a?.[event] ?? []), ...(b?.[event] ?? [])];
    if (list.length) out[event] = list as never;
  }
  return out;
}
