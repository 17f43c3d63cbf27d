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
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener("abort", onParentAbort, { once: true });
  // A touch only notes the time (it comes with every chunk of a stream); the one timer checks
  // when it fires how long it has been quiet and waits out the rest, instead of a new timer per chunk.
  let last = performance.now();
  const check = () => {
    const quiet = performance.now() - last;
    if (quiet < ms) {
      timer = setTimeout(check, Math.max(1, ms - quiet));
      return;
    }
    expired = true;
    controller.abort(new Error(`no data for ${ms} ms`));
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(check, ms);
  return {
    signal: controller.signal,
    touch() {
      last = performance.now();
    },
    get expired() {
      return expired;
    },
    dispose() {
      clearTimeout(timer);
      timer = undefined;
      parent?.removeEventListener("abort", onParentAbort);
    },
  };
}
