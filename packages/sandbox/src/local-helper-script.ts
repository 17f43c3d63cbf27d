// The local backend's helper: one bash per sandbox, started once, that runs each command in a
// forked subshell job and frames its output the way the session shell does (session-script.ts,
// the same protocol: ShellSession drives both). Why: spawning `bash -c` from Node forks the Node
// process (its page tables, its copy-on-write faults) and then execs and links a fresh bash —
// ~13 ms of Node's CPU a command on this 2-core guest, more than the command; a fork of a small
// bash is a fraction of it and costs Node nothing.
//
// What a command sees is what `bash -c` gave it: the sandbox's environment (scrubbed by the
// host), the workspace or its cwd, stdin or /dev/null, its own process group. Nothing carries
// over between commands (the local backend keeps no session state): each job is forked from
// the helper, which runs nothing a command wrote and holds no variable a command could set.
// - When a job returns, what is left in its process group gets SIGTERM, and SIGKILL before the
//   next command's begin line (or 0.5 s later, if none comes first): background jobs do not
//   keep a call waiting and do not outlive it, as before.
// - Timeout or abort (SIGUSR1 from the host): SIGTERM to the job's group, SIGKILL 0.5 s later
//   until it is empty (a small killer process aimed at that group, not at whatever job runs
//   by then).
// - Forked ahead. After each command (and at start) the helper forks the next job at once; it
//   waits for its command on a pipe of the helper's, read-only for it, so the fork and its
//   page faults happen while the host and the model work, not on the next command's path. A
//   command with stdin, or a frame over 4 KiB (one atomic pipe write), gets a new job instead;
//   so does one whose waiting job is gone or stopped, and one whose job died before it took
//   the frame (the pipe is given up then). The waiting job dies with the helper (its pipe
//   reaches end-of-file).
// - The token framing each result is random per command and never given to the job. Not
//   isolated, like the rest of this backend: a command runs as the user and can reach this
//   helper (signal it — a stopped helper is found and replaced, see ShellSession — or read
//   its memory), and a process it detaches with setsid keeps the helper's output pipes and
//   can write into later results until it exits.
export const LOCAL_HELPER_SCRIPT = String.raw`
unset HANDS_SESSION BASH_EXECUTION_STRING
exec 3>&2 2>/dev/null
exec {__h_null}</dev/null
__h_job=; __h_last=; __h_pre=; __h_cp=; __h_cr=
# SIGTERM to a group now, SIGKILL in 0.5 s (until it is empty: a fork bomb keeps adding to it).
__h_term() {
  kill -TERM -- -"$1" || return 1
  ( trap - USR1 TERM EXIT; sleep 0.5; n=0; while kill -KILL -- -"$1" && [ $n -lt 500 ]; do n=$((n + 1)); done ) >/dev/null 2>&1 <&$__h_null 3>&- {__h_null}<&- {__h_cp}<&- {__h_cr}<&- &
  return 0
}
trap '__h_intr=1; [ -z "$__h_job" ] || __h_term "$__h_job"' USR1
trap '[ -z "$__h_last" ] || kill -KILL -- -"$__h_last"; [ -z "$__h_job" ] || kill -KILL -- -"$__h_job"; exit 0' TERM
trap '[ -z "$__h_pre" ] || kill -KILL "$__h_pre"' EXIT
set -m
# The pipe jobs forked ahead read their command from: the read end of a process substitution
# opened again read-write (the helper's; its writer ':' is gone at once) and read-only (the
# waiting job's: once the helper is gone, nothing holds a write end and the job's read ends).
if exec {__h_cp}<> <(: >&- 3>&- {__h_null}<&-); then exec {__h_cr}< /dev/fd/$__h_cp || { exec {__h_cp}<&-; __h_cp=; }; fi
__h_ahead() {
  [ -n "$__h_cp" ] || return 0
  (
    trap - USR1 TERM EXIT
    unset -f __h_term __h_ahead __h_usable __h_launch __h_waitjob
    unset __h_len __h_line __h_in __h_tok __h_hasin __h_sub __h_keepbg __h_job __h_last __h_n __h_null __h_ir __h_rc __h_w __h_intr __h_pre
    IFS= read -r -N 8 __h_len <&$__h_cr || exit 1
    case $__h_len in ????????) ;; *) exit 1 ;; esac
    case $__h_len in *[!0-9a-f]*) exit 1 ;; esac
    IFS= read -r -N $((16#$__h_len)) __h_line <&$__h_cr || exit 1
    exec {__h_cr}<&-
    __h_cwd=; __h_cmd=
    eval "$__h_line"
    unset __h_len __h_line __h_tok __h_hasin __h_sub __h_keepbg __h_cr __h_cp
    if [ -n "$__h_cwd" ]; then cd -- "$__h_cwd" || exit 1; fi
    unset __h_cwd
    eval "$__h_cmd"
  ) <&$__h_null 2>&3 {__h_null}<&- {__h_cp}<&- 3>&- &
  __h_pre=$!
}
# Whether the job forked ahead can take this command: alive, not stopped, no stdin, one write.
__h_usable() {
  local st
  [ "$__h_hasin" = 0 ] && [ $((8 + ${"${"}#__h_line})) -le 4096 ] || return 1
  # A stopped one is replaced, not continued: bash may take the stop it saw for its exit status.
  IFS= read -r st < "/proc/$__h_pre/stat" || return 1
  st=${"${"}st##*) }
  [ "${"${"}st%% *}" != T ] || return 1
  kill -CONT "$__h_pre" && IFS= read -r st < "/proc/$__h_pre/stat" || return 1
  st=${"${"}st##*) }
  [ "${"${"}st%% *}" != Z ] && [ "${"${"}st%% *}" != T ]
}
# A new job for the command (its stdin, if it has one, from a writer of its own).
__h_launch() {
  if [ "$__h_hasin" = 1 ]; then
    exec {__h_ir}< <(printf '%s' "$__h_in" 3>&- {__h_null}<&- {__h_cp}<&- {__h_cr}<&-)
  else
    __h_ir=$__h_null
  fi
  (
    trap - USR1 TERM EXIT
    unset -f __h_term __h_ahead __h_usable __h_launch __h_waitjob
    unset __h_len __h_line __h_in __h_tok __h_hasin __h_sub __h_keepbg __h_job __h_last __h_n __h_null __h_ir __h_rc __h_w __h_intr __h_pre __h_cp __h_cr
    if [ -n "$__h_cwd" ]; then cd -- "$__h_cwd" || exit 1; fi
    unset __h_cwd
    eval "$__h_cmd"
  ) <&$__h_ir 2>&3 {__h_ir}<&- {__h_null}<&- {__h_cp}<&- {__h_cr}<&- 3>&- &
  __h_job=$!
  [ "$__h_hasin" = 1 ] && exec {__h_ir}<&-
  return 0
}
# (wait returns 128+10 when the trap of SIGUSR1 interrupts it, and 128+the signal when the job
# stops, under set -m — then the job is continued, as bg would — and it may still say so once the
# job is gone, until bash has seen the continue: the job's own status is then asked for again;
# 127 means the first answer was already the job's.)
__h_waitjob() {
  local st
  __h_intr=0
  while :; do
    wait "$__h_job"; __h_rc=$?
    kill -0 "$__h_job" || break
    IFS= read -r st < "/proc/$__h_job/stat" && st=${"${"}st##*) } && [ "${"${"}st%% *}" = T ] && kill -CONT -- -"$__h_job"
  done
  case $__h_intr$__h_rc in 1*|0147|0148|0149|0150)
    wait "$__h_job" 2>/dev/null; __h_w=$?; [ $__h_w = 127 ] || __h_rc=$__h_w ;;
  esac
}
__h_ahead
printf 'READY %s\n' "$$"
while :; do
  IFS= read -r -N 8 __h_len || break
  case $__h_len in ????????) ;; *) break ;; esac
  case $__h_len in *[!0-9a-f]*) echo "local helper: bad command frame" >&3; exit 1 ;; esac
  IFS= read -r -N $((16#$__h_len)) __h_line || exit 1
  __h_in=; __h_hasin=0; __h_cwd=; __h_sub=0; __h_keepbg=0; __h_tok=; __h_cmd=
  eval "$__h_line"
  # What the last command left in its group, killed before this one's output begins.
  if [ -n "$__h_last" ]; then
    __h_n=0
    while kill -KILL -- -"$__h_last" && [ $__h_n -lt 100 ]; do __h_n=$((__h_n + 1)); done
    __h_last=
  fi
  printf '%s:begin\n' "$__h_tok"
  printf '%s:begin\n' "$__h_tok" >&3
  if [ -n "$__h_pre" ]; then
    if __h_usable; then
      __h_job=$__h_pre
      printf '%s%s' "$__h_len" "$__h_line" >&$__h_cp
    else
      kill -KILL "$__h_pre"; wait "$__h_pre"
    fi
    __h_pre=
  fi
  [ -n "$__h_job" ] || __h_launch
  __h_waitjob
  # A frame the job forked ahead did not take (it died first): the pipe is given up and the
  # command runs in a new job.
  if [ -n "$__h_cp" ] && read -r -t 0 -u "$__h_cp"; then
    exec {__h_cp}<&- {__h_cr}<&-; __h_cp=; __h_cr=
    __h_launch
    __h_waitjob
  fi
  __h_cmd=; __h_in=; __h_line=
  # Its group's leftovers: SIGTERM now, SIGKILL at the next command or in 0.5 s.
  __h_term "$__h_job" && __h_last=$__h_job
  __h_job=
  printf '%s:end %d \n' "$__h_tok" "$__h_rc"
  printf '%s:end\n' "$__h_tok" >&3
  __h_ahead
done
[ -z "$__h_last" ] || kill -KILL -- -"$__h_last"
exit 0
`;
