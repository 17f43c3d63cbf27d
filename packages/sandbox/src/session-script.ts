// The persistent shell that runs inside a bwrap or docker session, and how the host talks to it.
//
// The host writes one line per command: shell assignments whose values are ANSI-C quoted
// (`$'…'`), so any bytes survive a single `read -r`. The shell runs the command in a subshell
// job (own process group thanks to `set -m`) so that `exit` and endless builtin loops stay
// contained and a timeout can kill exactly that job's tree; the job's EXIT trap saves the
// working directory and exported variables, which the session shell then loads, so state
// persists from one command to the next. End markers carry a random token per command.

export const SESSION_SCRIPT = String.raw`
exec 3>&2 2>/dev/null
__h_dir=/tmp
__h_job=
# Timeout/abort: kill the command's process group until it is empty (a fork bomb keeps adding
# to it while the first signal lands). kill is a builtin: this works with no PID left.
trap 'if [ -n "$__h_job" ]; then __h_n=0; while kill -KILL -- -"$__h_job" && [ $__h_n -lt 500 ]; do __h_n=$((__h_n + 1)); done; fi' USR1
trap '' INT TERM HUP PIPE
set -m
cd /workspace
# Allow-list network: start the forwarder to the host's proxy and wait until it listens.
if [ -S /run/hands-proxy.sock ] && [ -n "$HANDS_FORWARDER" ]; then
  exec 4< <(exec python3 -c "$HANDS_FORWARDER" 2>/dev/null)
  read -r -u 4 __h_fwd
  exec 4<&-
fi
unset HANDS_FORWARDER
printf 'READY %s\n' "$$"
while IFS= read -r __h_line; do
  __h_in=; __h_hasin=0; __h_cwd=; __h_sub=0
  eval "$__h_line"
  if [ "$__h_hasin" = 1 ]; then printf '%s' "$__h_in" > "$__h_dir/.hands-$$-in"; __h_src=$__h_dir/.hands-$$-in; else __h_src=/dev/null; fi
  : > "$__h_dir/.hands-$$-state"
  (
    trap - INT TERM HUP PIPE
    trap '{ export -p; printf "cd -- %q\n" "$PWD"; } > "$__h_dir/.hands-$$-state"' EXIT
    if [ -n "$__h_cwd" ]; then cd -- "$__h_cwd" || exit 1; fi
    eval "$__h_cmd"
  ) < "$__h_src" 2>&3 3>&- &
  __h_job=$!
  while :; do
    wait "$__h_job"; __h_rc=$?
    kill -0 "$__h_job" || break
  done
  __h_job=
  if [ "$__h_sub" = 0 ] && [ -s "$__h_dir/.hands-$$-state" ]; then
    __h_keep=$PWD
    . "$__h_dir/.hands-$$-state"
    [ -n "$__h_cwd" ] && cd -- "$__h_keep"
  fi
  printf '%s %d\n' "$__h_tok" "$__h_rc"
  printf '%s\n' "$__h_tok" >&3
done
`;

/** Quotes `s` as a bash ANSI-C string (`$'…'`): safe for any bytes except NUL (dropped). */
export function ansiQuote(s: string): string {
  let out = "$'";
  for (const byte of Buffer.from(s, "utf8")) {
    if (byte === 0) continue;
    if (byte === 0x27) out += "\\'";
    else if (byte === 0x5c) out += "\\\\";
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return `${out}'`;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The protocol line for one command. */
export function commandLine(opts: {
  token: string;
  command: string;
  stdin?: string | undefined;
  cwd?: string | undefined;
  env?: Record<string, string> | undefined;
}): string {
  let cmd = opts.command;
  let sub = 0;
  if (opts.env && Object.keys(opts.env).length > 0) {
    // Per-command variables must not leak into the session: export them in the job only and
    // do not load its state back.
    const exports = Object.entries(opts.env)
      .filter(([k]) => NAME.test(k))
      .map(([k, v]) => `export ${k}=${ansiQuote(v)}`)
      .join("; ");
    cmd = `${exports}\n${cmd}`;
    sub = 1;
  }
  const parts = [`__h_tok=${opts.token}`, `__h_cmd=${ansiQuote(cmd)}`, `__h_sub=${sub}`];
  if (opts.stdin !== undefined) parts.push("__h_hasin=1", `__h_in=${ansiQuote(opts.stdin)}`);
  if (opts.cwd) parts.push(`__h_cwd=${ansiQuote(opts.cwd)}`);
  return `${parts.join("; ")}\n`;
}
