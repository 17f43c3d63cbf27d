// The code interpreter's kernel: a Python process in the sandbox (one per context) that runs
// cells the way a notebook does — statements executed, the value of a final expression returned
// as the main result, errors with their traceback — and reports in NDJSON on its own copy of
// stdout. The real fds 1 and 2 are pipes it reads itself, so output of `print` and of child
// processes alike becomes stdout/stderr events, and a marker written after each cell tells it
// when all of a cell's output has arrived.
//
// stdin  (host → kernel): {"code": ..., "env": {...}} per line
// proto  (kernel → host): {"type": "stdout"|"stderr", "text"} | {"type": "result", "text",
//         "is_main_result": true} | {"type": "error", "name", "value", "traceback"} |
//         {"type": "number_of_executions", "execution_count"} | {"type": "__done__"}
export const KERNEL_SOURCE = String.raw`
import ast, json, os, sys, threading, traceback

proto = os.fdopen(os.dup(1), "w", buffering=1)
plock = threading.Lock()
def emit(obj):
    with plock:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

MARK = "\x00hands-cell-end-" + os.urandom(8).hex() + "\n"
done = {1: threading.Event(), 2: threading.Event()}

def pump(fd, kind):
    r, w = os.pipe()
    os.dup2(w, fd)
    os.close(w)
    f = os.fdopen(r, "r", errors="replace")
    buf = ""
    while True:
        chunk = f.readline()
        if not chunk:
            return
        buf += chunk
        if buf.endswith(MARK):
            text = buf[: -len(MARK)]
            if text:
                emit({"type": kind, "text": text})
            buf = ""
            done[fd].set()
        elif buf.endswith("\n") or len(buf) > 65536:
            emit({"type": kind, "text": buf})
            buf = ""

for fd, kind in ((1, "stdout"), (2, "stderr")):
    threading.Thread(target=pump, args=(fd, kind), daemon=True).start()
sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)

scope = {"__name__": "__main__"}
count = 0

def run(code):
    tree = ast.parse(code, "<cell>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), scope)
    if last is not None:
        value = eval(compile(last, "<cell>", "eval"), scope)
        if value is not None:
            emit({"type": "result", "text": repr(value), "is_main_result": True})

for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    count += 1
    emit({"type": "number_of_executions", "execution_count": count})
    saved = dict(os.environ)
    os.environ.update({str(k): str(v) for k, v in (req.get("env") or {}).items()})
    try:
        run(req.get("code", ""))
    except KeyboardInterrupt:
        emit({"type": "error", "name": "KeyboardInterrupt", "value": "interrupted", "traceback": "KeyboardInterrupt: interrupted"})
    except BaseException as e:
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        emit({"type": "error", "name": type(e).__name__, "value": str(e), "traceback": tb})
    finally:
        os.environ.clear()
        os.environ.update(saved)
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        done[fd].clear()
        try:
            stream.flush()
        except Exception:
            pass
        os.write(fd, MARK.encode())
    for fd in (1, 2):
        done[fd].wait(5)
    emit({"type": "__done__"})
`;
