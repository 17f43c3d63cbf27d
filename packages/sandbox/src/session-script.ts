// The persistent shell that runs inside a bwrap or docker session, and how the host talks to it.
//
// The host writes one line per command, behind its length: shell assignments whose values are
// ANSI-C quoted (`$'…'`), so any bytes survive and the line is pure ASCII. What the model is told a command printed
// must be what that command printed, so:
// - The shell and its output relays are started from execute-only programs (runtime-dir.ts):
//   they are not dumpable, and no sandboxed process can open their /proc/PID/fd, ptrace them
//   or read their memory.
// - Each command's output is framed by `TOKEN:begin` and `TOKEN:end RC LEFT` lines on both
//   streams; the token is random per command and never given to the command, and the host
//   drops everything outside a frame.
// - Direct or relayed. While nothing is kept from earlier commands and the command did not ask
//   to keep what it starts, it writes straight into the host's pipes (no copy, no extra
//   process to wake: a step is a fork and a wait). Anything it leaves running is killed
//   before the next command's begin line — bytes it wrote before dying come before that line
//   and are dropped — and should that ever fail, the shell ends the session rather than run
//   the next command beside a process holding the host's pipes. A command that keeps
//   processes (keepBackground), and every command while kept processes live, gets fresh pipes
//   instead, copied to the host by relays; the relays are stopped before the next command and
//   kept processes get a discard reader, so nothing a kept process writes later reaches any
//   result.
// - The command runs in a subshell job (own process group thanks to `set -m`), so `exit` and
//   endless builtin loops stay contained and a timeout kills exactly its tree. When the command
//   returns, the job writes the exported variables and working directory into a state file of
//   its own (closed for the command itself; bash keeps its saved copy close-on-exec, so no
//   program the command starts holds it; a command that ends in `exit`, `exec` or `set -e`
//   keeps the session's previous state). The file is made and unlinked before any sandboxed process exists, so it
//   has no name anything could open; being a file, not a pipe, the shell reads it back in a
//   few calls, and takes it only behind the PID of the job it waited for. The shell keeps that
//   text and hands it to the next job, which evaluates it unless it equals the exports every
//   job inherits from the shell anyway; the session shell itself never runs anything a
//   command wrote.
// - Forked ahead. After a direct command that left nothing running (so no sandboxed process
//   exists but the shell's own), the shell forks the next job at once; it evaluates the state
//   and waits for its command on a pipe only the shell and it hold (both ends one descriptor,
//   closed before the command runs). The fork and its page faults then happen while the host
//   and the model work. The next command goes to it only if it is direct, has no stdin and fits
//   4 KiB, was never stopped, answered SIGCONT and is not a zombie; otherwise it is killed and a new job
//   forked. It writes a byte back once it has taken its command: a job that died before that
//   never ran it, and a new job does; a frame left in the pipe gives the pipe up for good.
// - When the job ends, the processes it left running are listed in the end line (LEFT). At the
//   next command they are killed (a fork bomb included) unless the command asked to keep them.
//   Kept processes run beside later commands as the same user: they cannot reach the session's
//   pipes, but could open the pipes of a later command's own programs through /proc/PID/fd,
//   so keep only what you trust.

export const SESSION_SCRIPT = String.raw`
unset HANDS_SESSION
exec 3>&2 2>/dev/null
__h_cat=$HANDS_RELAY
unset HANDS_RELAY
__h_job=; __h_lastjob=; __h_ow=; __h_ew=; __h_or=; __h_er=; __h_prevkeep=0; __h_prevdirect=0; __h_fwd=
__h_keep=' '; __h_discard=; __h_left=; __h_leftpids=; __h_inpid=; __h_exp=; __h_dir=; __h_pre=; __h_cp=9
# Processes that were here before us (docker's init and main process) are never leftovers.
__h_base=' '
for __h_p in /proc/[0-9]*; do __h_p=${"${"}__h_p#/proc/}; [ "$__h_p" = $$ ] || __h_base+="$__h_p "; done
# The state file: made exclusively (noclobber: no planted name is followed) before any sandboxed
# command runs, then unlinked; only descriptors reach it.
set -C
__h_sfn=/tmp/.hands-state.$$.$RANDOM$RANDOM
exec {__h_sf}>"$__h_sfn" || { echo "session shell: cannot make its state file in /tmp" >&3; exit 95; }
set +C
rm -f -- "$__h_sfn" || { echo "session shell: cannot unlink its state file" >&3; exit 95; }
unset __h_sfn
exec {__h_null}</dev/null

# At a timeout, first: the command's process group as it was (pid ppid state argv, at most 30),
# for the failure's diagnosis (diagnose.ts reads it). Builtins only: it works under a fork bomb.
__h_tree() {
  local p st a c n=0 out=
  for p in /proc/[0-9]*; do
    read -r st 2>/dev/null < "$p/stat" || continue
    set -- ${"${"}st##*) }
    [ "$3" = "$__h_job" ] || continue
    c=; mapfile -d '' -t a 2>/dev/null < "$p/cmdline" && c="${"${"}a[*]}"
    out+="${"${"}p#/proc/} $2 $1 ${"${"}c:0:200}"$'\n'
    n=$((n + 1)); [ $n -ge 30 ] && break
  done
  # Truncated, not removed (rm would fork): what the command wrote there is gone.
  printf '%s' "$out" 2>/dev/null > /tmp/.hands-timeout-tree
}
# Timeout/abort: kill the command's process group until it is empty (a fork bomb keeps adding
# to it while the first signal lands). kill is a builtin: this works with no PID left.
trap '__h_intr=1; if [ -n "$__h_job" ]; then __h_tree; __h_n=0; while kill -KILL -- -"$__h_job" && [ $__h_n -lt 500 ]; do __h_n=$((__h_n + 1)); done; fi' USR1
trap '' INT TERM HUP PIPE
# A job forked ahead (__h_ahead) holds its own command pipe: it never outlives the shell.
trap '[ -z "$__h_pre" ] || kill -KILL "$__h_pre"' EXIT
set -m
cd /workspace
# Allow-list network: start the forwarder to the host's proxy and wait until it listens.
if [ -S /run/hands-proxy.sock ] && [ -n "$HANDS_FORWARDER" ]; then
  # (The forwarder is a dumpable python: it must hold none of the session's descriptors.)
  exec 4< <(exec python3 -c "$HANDS_FORWARDER" 2>/dev/null </dev/null 3>&- {__h_sf}>&- {__h_null}<&-)
  __h_fwd=$!
  read -r -u 4 __h_ready
  exec 4<&-
fi
unset HANDS_FORWARDER
# What every job inherits from this shell anyway, as a job reports it (below): a state equal
# to it needs no evaluation in the next job. PWD and OLDPWD travel as the working directory.
( export -n PWD OLDPWD; export -p ) 2>/dev/null >/dev/fd/$__h_sf
IFS= read -r -d '' __h_exp0 < /dev/fd/$__h_sf
__h_infra=" $$ $__h_fwd "
# The pipe jobs forked ahead read their command from (see __h_ahead): both of its ends are this
# one descriptor — the read end of a process substitution opened again read-write through
# /dev/fd (its writer, ':', is gone at once). No other process of the session holds it.
# (9, never open, when it cannot be made or was given up: closing it for a process is harmless.)
exec {__h_cp}<> <(: >&- 3>&- {__h_sf}>&- {__h_null}<&-) || __h_cp=9

# Lists the processes nobody accounts for (no forks: safe under a fork bomb) into __h_leftpids
# and, at most 20 of them with their names, __h_left. Children of kept processes are kept.
__h_scan() {
  local p s st pp n c=0
  __h_left=; __h_leftpids=
  for p in /proc/[0-9]*; do
    p=${"${"}p#/proc/}
    case "$__h_infra$__h_base$__h_keep" in *" $p "*) continue ;; esac
    IFS= read -r s < "/proc/$p/stat" || continue
    s=${"${"}s##*) }; st=${"${"}s%% *}; s=${"${"}s#* }; pp=${"${"}s%% *}
    [ "$st" = Z ] && continue
    case "$__h_keep" in *" $pp "*) __h_keep+="$p "; continue ;; esac
    __h_leftpids+="$p "
    c=$((c + 1))
    if [ $c -le 20 ]; then
      IFS= read -r n < "/proc/$p/comm" || n=?
      __h_left+="$p:${"${"}n//[^A-Za-z0-9._+-]/?} "
    fi
  done
  [ $c -gt 20 ] && __h_left+="+$((c - 20))"
}

# Before a command: kill what the previous one left running (unless it asked to keep it), then
# stop its relays, if it had any; kept processes get a discard reader instead, so their writes
# do not fail.
__h_settle() {
  [ -n "$__h_lastjob" ] || return 0
  local p n=0 live=
  # The last command's stdin writer, if the command did not read it all.
  [ -n "$__h_inpid" ] && kill -KILL "$__h_inpid" && wait "$__h_inpid"
  __h_inpid=
  # Fast path: the last command left nothing running and nothing is kept; check once more.
  if [ -z "$__h_leftpids" ] && [ "$__h_keep" = ' ' ] && [ -z "$__h_ow$__h_discard" ]; then
    __h_scan
    [ -z "$__h_leftpids" ] && return 0
  fi
  if [ "$__h_prevkeep" = 1 ]; then
    __h_scan
    __h_keep+="$__h_leftpids"
  else
    while kill -KILL -- -"$__h_lastjob" && [ $n -lt 100 ]; do n=$((n + 1)); done
  fi
  # A killed process in the middle of disk I/O (a \`sync\` the quota stopped) dies only once that
  # I/O is done: after 50 quick rounds, rounds 50 ms apart for up to 5 s.
  n=0
  while [ $n -lt 150 ]; do
    __h_scan
    [ -z "$__h_leftpids" ] && break
    for p in $__h_leftpids; do kill -KILL "$p"; done
    n=$((n + 1))
    [ $n -gt 50 ] && sleep 0.05
  done
  # Something the last command started outlived every kill and may hold the host's pipes:
  # no later command may run beside it.
  if [ -n "$__h_leftpids" ] && [ "$__h_prevdirect" = 1 ]; then
    echo "session shell: processes a command left could not be stopped; ending the session" >&3
    exit 1
  fi
  if [ -n "$__h_ow" ]; then
    # The discard readers' ends are open before the relays go: a kept process writing in
    # between must not meet a pipe without a reader (SIGPIPE would kill it).
    if [ "$__h_keep" != ' ' ]; then
      exec {__h_d1}< /dev/fd/$__h_ow {__h_d2}< /dev/fd/$__h_ew
      "$__h_cat" <&$__h_d1 > /dev/null {__h_d1}<&- {__h_d2}<&- {__h_ow}>&- {__h_ew}>&- {__h_cp}<&- 3>&- &
      __h_discard+="$! "
      "$__h_cat" <&$__h_d2 > /dev/null {__h_d1}<&- {__h_d2}<&- {__h_ow}>&- {__h_ew}>&- {__h_cp}<&- 3>&- &
      __h_discard+="$! "
      exec {__h_d1}<&- {__h_d2}<&-
    fi
    kill -KILL $__h_or $__h_er
    wait $__h_or $__h_er
    exec {__h_ow}>&- {__h_ew}>&-
    __h_ow=; __h_ew=; __h_or=; __h_er=
  fi
  for p in $__h_discard; do [ -e /proc/$p ] && live+="$p "; done
  __h_discard=$live; live=
  for p in $__h_keep; do [ -e /proc/$p ] && live+="$p "; done
  __h_keep=" $live"
}

# Forks the next command's job now, so that the fork (the most of a command's cost: its
# copy-on-write faults) happens while the host and the model work, not on the next command's
# path. Only after a direct command that left nothing running, with nothing kept: then no
# sandboxed process exists besides this shell's own, and none can signal the waiting job or
# reach the pipe it reads its command from (made here, held only by this shell and the job,
# closed by the job before the command runs). The job evaluates the state now and waits; the
# next command is handed to it only if it is direct, has no stdin and fits one atomic pipe write
# (so handing it over never blocks), after the job answered SIGCONT — otherwise the job is
# killed and a new one forked as before. What it runs is exactly what a new job would run.
__h_ahead() {
  [ "$__h_prevdirect" = 1 ] && [ -z "$__h_leftpids" ] && [ "$__h_keep" = ' ' ] && [ -z "$__h_discard" ] &&
    [ "$__h_cp" != 9 ] || return 0
  (
    trap - INT TERM HUP PIPE USR1 EXIT
    unset __h_len __h_line __h_in __h_tok __h_ow __h_ew __h_or __h_er __h_infra __h_base __h_keep __h_discard __h_left __h_leftpids __h_inpid __h_jo __h_je __h_x1 __h_x2 __h_null __h_exp0 __h_pre
    [ -z "$__h_exp" ] || eval "$__h_exp"
    unset __h_exp
    set +o posix
    IFS= read -r -N 8 __h_len <&$__h_cp || exit 1
    case $__h_len in ????????) ;; *) exit 1 ;; esac
    case $__h_len in *[!0-9a-f]*) exit 1 ;; esac
    IFS= read -r -N $((16#$__h_len)) __h_line <&$__h_cp || exit 1
    # Taken: until this byte is in the pipe the command has not run, and may run elsewhere.
    printf A >&$__h_cp
    exec {__h_cp}<&-
    unset __h_cp
    set -o posix
    __h_cwd=; __h_cmd=
    eval "$__h_line"
    unset __h_len __h_line __h_in __h_tok __h_hasin __h_keepbg __h_sub
    [ -z "$__h_dir" ] || [ "$__h_dir" = "$PWD" ] || cd -- "$__h_dir"
    unset __h_dir
    __h_pwd0=$PWD
    if [ -n "$__h_cwd" ]; then cd -- "$__h_cwd" || exit 1; fi
    eval "$__h_cmd" {__h_sf}>&-
    __h_rc=$?
    if [ -n "$__h_cwd" ]; then __h_t=$__h_pwd0; else __h_t=$PWD; fi
    { printf '%s\0' "$BASHPID"; export -n PWD OLDPWD; export -p; printf '\0%s\0' "$__h_t"; } 2>/dev/null >/dev/fd/$__h_sf
    exit $__h_rc
  ) <&$__h_null 2>&3 {__h_null}<&- 3>&- &
  __h_pre=$!
  __h_infra+="$__h_pre "
}

# The job forked ahead, unless it can run this command (see __h_ahead): killed, and reaped.
__h_unahead() {
  [ -n "$__h_pre" ] || return 0
  if [ "$__h_keepbg" = 1 ] || [ "$__h_hasin" = 1 ] || [ $((8 + ${"${"}#__h_line})) -gt 4096 ]; then __h_drop; fi
}
__h_drop() {
  kill -KILL "$__h_pre"
  wait "$__h_pre"
  __h_pre=
}
# Whether the job forked ahead is alive and was never stopped: a stopped one is replaced, not
# continued (bash may take a stop it saw for the job's exit status, see __h_waitjob); SIGCONT
# then clears a stop still on its way, and a job killed and not yet reaped is a zombie.
__h_prealive() {
  local st
  IFS= read -r st < "/proc/$__h_pre/stat" || return 1
  st=${"${"}st##*) }
  [ "${"${"}st%% *}" != T ] || return 1
  kill -CONT "$__h_pre" && IFS= read -r st < "/proc/$__h_pre/stat" || return 1
  st=${"${"}st##*) }
  [ "${"${"}st%% *}" != Z ] && [ "${"${"}st%% *}" != T ]
}

# Forks a new job for the command (stdin, descriptors as set up above); sets __h_job.
__h_launch() {
  if [ "$__h_hasin" = 1 ]; then
    exec {__h_ir}< <(printf '%s' "$__h_in" {__h_x1}>&- {__h_x2}>&- {__h_cp}<&- 3>&-)
    __h_inpid=$!
    __h_infra+="$__h_inpid "
  else
    __h_ir=$__h_null
  fi
  (
    trap - INT TERM HUP PIPE USR1
    unset __h_len __h_line __h_in __h_tok __h_ow __h_ew __h_or __h_er __h_infra __h_base __h_keep __h_discard __h_left __h_leftpids __h_inpid __h_jo __h_je __h_x1 __h_x2 __h_null __h_exp0
    [ -z "$__h_exp" ] || eval "$__h_exp"
    [ -z "$__h_dir" ] || [ "$__h_dir" = "$PWD" ] || cd -- "$__h_dir"
    unset __h_exp __h_dir
    __h_pwd0=$PWD
    if [ -n "$__h_cwd" ]; then cd -- "$__h_cwd" || exit 1; fi
    eval "$__h_cmd" {__h_sf}>&-
    # Reported once the command returns (not from an EXIT trap: after an "exit" inside the eval
    # the state file's number is closed, or reused by whatever the command opened last), in one
    # write, behind this job's PID: what an earlier job wrote (one killed later, or whose
    # state was not to be kept) is never taken for this one's.
    __h_rc=$?
    if [ -n "$__h_cwd" ]; then __h_t=$__h_pwd0; else __h_t=$PWD; fi
    { printf '%s\0' "$BASHPID"; export -n PWD OLDPWD; export -p; printf '\0%s\0' "$__h_t"; } 2>/dev/null >/dev/fd/$__h_sf
    exit $__h_rc
  ) <&$__h_ir >&$__h_jo 2>&$__h_je {__h_ir}<&- {__h_x1}>&- {__h_x2}>&- {__h_null}<&- {__h_cp}<&- 3>&- &
  __h_job=$!
  [ "$__h_hasin" = 1 ] && exec {__h_ir}<&-
  return 0
}
# Waits for the job to end; its status in __h_rc. Under set -m, wait also returns when the job
# stops: a stopped job is continued, as bg would (nothing else ever will). Until bash has seen
# that continue, wait still answers 128+the stop signal — even once the job is gone (reaped by
# bash's SIGCHLD handler, its real status kept) — so such an answer, like one the USR1 trap
# interrupted, is asked for again; 127 then means the first answer was the job's own.
__h_waitjob() {
  local st w
  while :; do
    wait "$__h_job"; __h_rc=$?
    kill -0 "$__h_job" || break
    IFS= read -r st < "/proc/$__h_job/stat" && st=${"${"}st##*) } && [ "${"${"}st%% *}" = T ] && kill -CONT -- -"$__h_job"
  done
  case $__h_intr$__h_rc in 1*|0147|0148|0149|0150)
    wait "$__h_job" 2>/dev/null; w=$?; [ $w = 127 ] || __h_rc=$w ;;
  esac
}
# Whether the job forked ahead took its frame (its byte, and nothing else, is in the pipe). A
# frame left in the pipe, whole or in part, gives the pipe up: no later job may read it.
__h_taken() {
  local a=
  read -r -t 0 -u "$__h_cp" || return 1
  IFS= read -r -N 1 -u "$__h_cp" a
  if [ "$a" = A ] && ! read -r -t 0 -u "$__h_cp"; then return 0; fi
  exec {__h_cp}<&-; __h_cp=9
  [ "$a" = A ]
}

printf 'READY %s\n' "$$"
# Each command line comes behind its length (8 hex digits): read -N takes it in one call, where
# a line read stops at every byte. (Started as "sh", bash is in POSIX mode, where read -N too
# reads a byte at a time: the reads run outside it; commands still run as before.)
while :; do
  set +o posix
  IFS= read -r -N 8 __h_len || exit 0
  case $__h_len in ????????) ;; *) exit 0 ;; esac
  case $__h_len in *[!0-9a-f]*) echo "session shell: bad command frame" >&3; exit 1 ;; esac
  IFS= read -r -N $((16#$__h_len)) __h_line || exit 1
  set -o posix
  __h_in=; __h_hasin=0; __h_cwd=; __h_sub=0; __h_keepbg=0; __h_tok=
  eval "$__h_line"
  __h_unahead
  __h_settle
  printf '%s:begin\n' "$__h_tok"
  printf '%s:begin\n' "$__h_tok" >&3
  if [ "$__h_keepbg" = 1 ] || [ "$__h_keep" != ' ' ] || [ -n "$__h_discard" ]; then
    exec {__h_ow}> >(exec "$__h_cat" {__h_cp}<&- 3>&-)
    __h_or=$!
    exec {__h_ew}> >(exec "$__h_cat" >&3 {__h_ow}>&- {__h_cp}<&- 3>&-)
    __h_er=$!
    __h_jo=$__h_ow; __h_je=$__h_ew; __h_x1=$__h_ow; __h_x2=$__h_ew; __h_prevdirect=0
  else
    # (__h_x1/__h_x2: what the command's processes must not hold; fd 9 is never open.)
    __h_jo=1; __h_je=3; __h_x1=9; __h_x2=9; __h_prevdirect=1
  fi
  __h_infra=" $$ $__h_fwd $__h_discard$__h_or $__h_er "
  [ -z "$__h_pre" ] || __h_prealive || __h_drop
  __h_handed=0; __h_intr=0
  if [ -n "$__h_pre" ]; then
    # Alive after the leftovers' kills: the frame goes to it in one write of at most 4 KiB,
    # into a pipe nothing else holds.
    __h_job=$__h_pre; __h_pre=; __h_handed=1
    printf '%s%s' "$__h_len" "$__h_line" >&$__h_cp
  else
    __h_launch
  fi
  __h_lastjob=$__h_job
  __h_waitjob
  # A job forked ahead that died before it took the command (killed while it was already on its
  # way out when it was checked): the command never ran; a new job runs it.
  if [ "$__h_handed" = 1 ] && ! __h_taken && [ "$__h_intr" = 0 ]; then
    __h_launch
    __h_lastjob=$__h_job
    __h_waitjob
  fi
  __h_job=
  # A frame the job forked ahead did not take (it was killed first) must never reach the next
  # one: the pipe is given up (no more jobs forked ahead in this session).
  if [ "$__h_cp" != 9 ] && read -r -t 0 -u "$__h_cp"; then exec {__h_cp}<&-; __h_cp=9; fi
  # The job's state, written before it exited (nothing there when it was killed or ran exec).
  # (Three reads, not one and pattern removals: those take quadratic time on a large state.)
  if { IFS= read -r -d '' __h_s && IFS= read -r -d '' __h_e && IFS= read -r -d '' __h_d; } < /dev/fd/$__h_sf &&
    [ "$__h_sub" = 0 ] && [ "$__h_s" = "$__h_lastjob" ]; then
    if [ "$__h_e" = "$__h_exp0" ]; then __h_exp=; else __h_exp=$__h_e; fi
    __h_dir=$__h_d
  fi
  __h_e=; __h_d=
  __h_scan
  __h_prevkeep=$__h_keepbg
  if [ "$__h_jo" = 1 ]; then printf '%s:end %d %s\n' "$__h_tok" "$__h_rc" "$__h_left"
  else printf '%s:end %d %s\n' "$__h_tok" "$__h_rc" "$__h_left" >&$__h_jo || printf '%s:end %d %s\n' "$__h_tok" "$__h_rc" "$__h_left"; fi
  printf '%s:end\n' "$__h_tok" >&$__h_je || printf '%s:end\n' "$__h_tok" >&3
  __h_ahead
done
`;

/**
 * How the session shell is started: the script travels in the environment, not on the
 * command line, so the many forks of a busy session do not each show it in `ps`.
 */
export const SESSION_COMMAND = ["--noprofile", "--norc", "-c", 'eval "$HANDS_SESSION"'];
export const SESSION_ENV = "HANDS_SESSION";

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
  keepBackground?: boolean | undefined;
}): string {
  let cmd = opts.command;
  let sub = 0;
  if (opts.env && Object.keys(opts.env).length > 0) {
    // Per-command variables must not leak into the session: export them in the job only and
    // do not keep its state.
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
  if (opts.keepBackground) parts.push("__h_keepbg=1");
  // Every byte is ASCII (ansiQuote escapes the rest), so its length in characters is its length
  // in bytes whatever the shell's locale.
  const line = parts.join("; ");
  return `${line.length.toString(16).padStart(8, "0")}${line}`;
}
