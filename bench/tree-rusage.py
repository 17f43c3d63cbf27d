# Runs a command and writes, as JSON to the file named first, the CPU time (user + sys) and the
# peak RSS of its whole process tree, and the CLOCK_MONOTONIC times it was started and ended at.
#   python3 -SI bench/tree-rusage.py OUT.json COMMAND [ARGS…]
# It is made a child subreaper, so descendants that outlive their parents (a daemon, a detached
# sandbox) are re-parented to it and waited for here: every process of the tree is reaped by a
# waiting parent, and getrusage(RUSAGE_CHILDREN) then sums them all. Processes still alive 2 s
# after the command has exited are counted as leftovers and killed.
import ctypes
import os
import resource
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

out, argv = sys.argv[1], sys.argv[2:]
started_ns = time.monotonic_ns()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)


def reap(block):
    """Reaps exited children; returns False when none is left."""
    global code, ended_ns
    while True:
        try:
            p, status = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return False
        if p == 0:
            return True
        if p == pid:
            ended_ns = time.monotonic_ns()
            code = os.waitstatus_to_exitcode(status)
            if block:
                return True


def children():
    mine = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == os.getpid():
                mine.append(int(entry))
    return mine


code = None
ended_ns = None
while code is None:
    reap(True)
deadline = time.monotonic() + 2
while reap(False) and time.monotonic() < deadline:
    time.sleep(0.01)
leftovers = children()
for p in leftovers:
    os.kill(p, signal.SIGKILL)
while reap(True):
    pass
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "w") as f:
    cpu_ms = (ru.ru_utime + ru.ru_stime) * 1000
    f.write(
        f'{{"startedNs":"{started_ns}","endedNs":"{ended_ns}","cpuMs":{cpu_ms},"maxRssKb":{ru.ru_maxrss},'
        f'"leftovers":{len(leftovers)},"code":{code}}}'
    )
sys.exit(code if code >= 0 else 128 - code)
