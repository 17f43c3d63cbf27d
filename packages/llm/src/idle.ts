// An abort signal that fires when a stream goes quiet for too long. The SDKs' own timeouts stop
// at the response headers, so a server that stalls mid-stream would otherwise hang the run.

export interface IdleWatch {
  /** Pass to the SDK: aborts on the parent's abort or after `ms` without `touch()`. */
  signal: AbortSignal;
  /** Call on every chunk received. */
  touch(): void;
  /** True when the watch (not the parent signal) aborted. */
  readonly expired: boolean;
  dispose(): void;
}

export function idleWatch(ms: number, parent?: AbortSignal): IdleWatch {
  const controller = new AbortController();
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      expired = true;
      controller.abort(new Error(`no data for ${ms} ms`));
    }, ms);
  };
  touch();
  return {
    signal: controller.signal,
    touch,
    get expired() {
      return expired;
    },
    dispose() {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onParentAbort);
    },
  };
}
