// The code interpreter's kernel: a Python process in the sandbox (one per context) that runs
// cells the way a notebook does — statements executed, the value of a final expression returned
// as the main result, errors with their traceback — and reports in NDJSON on its own copy of
// stdout. The real fds 1 and 2 are pipes it reads itself, so output of `print` and of child
// processes alike becomes stdout/stderr events, and a marker written after each cell tells it
// when all of a cell's output has arrived.
//
// Rich results (formats, display(), figures) are display.ts.
//
// stdin  (host → kernel): {"code": ..., "env": {...}} per line
// proto  (kernel → host): {"type": "stdout"|"stderr", "text"} | {"type": "result", "text",
//         "html", "png", …, "extra", "is_main_result"} | {"type": "error", "name", "value",
//         "traceback"} | {"type": "number_of_executions", "execution_count"} | {"type": "__done__"}
import { DISPLAY_SOURCE } from "./display.js";

export const KERNEL_SOURCE = String.raw`
import ast, json, linecache, os, sys, threading, traceback

proto = os.fdopen(os.dup(1), "w", buffering=1)
plock = threading.Lock()
def emit(obj):
    with plock:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

MARK = "\x00hands-cell-end-" + os.urandom(8).hex() + "\n"
done = {1: threading.Event(), 2: threading.Event()}

def pump(fd, kind, r):
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
    # The pipe replaces the fd before the first cell can run (not in the thread: a race).
    r, w = os.pipe()
    os.dup2(w, fd)
    os.close(w)
    threading.Thread(target=pump, args=(fd, kind, r), daemon=True).start()
sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
slock = threading.Lock()

def sync_output(wait):
    """Waits until what was written to fds 1 and 2 so far has been sent (a marker goes through)."""
    with slock:
        sent = []
        for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
            done[fd].clear()
            try:
                stream.flush()
            except Exception:
                pass
            try:
                os.write(fd, MARK.encode())
                sent.append(fd)
            except OSError:
                pass  # the cell closed or replaced the fd: nothing of it to wait for
        for fd in sent:
            done[fd].wait(wait)

def user_traceback(e):
    """The traceback from the cell's own frames on (the kernel's are not the user's business)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != "<cell>":
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(e), e, tb))

${DISPLAY_SOURCE}
scope = {"__name__": "__main__", "display": display}
count = 0

def run(code):
    # Tracebacks show the cell's lines.
    linecache.cache["<cell>"] = (len(code), None, code.splitlines(True), "<cell>")
    tree = ast.parse(code, "<cell>", "exec")
    last = None
    # A final expression is the cell's result, unless a ';' ends the cell (as in a notebook).
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), scope)
    if last is not None:
        value = eval(compile(last, "<cell>", "eval"), scope)
        if value is not None:
            scope["_"] = value
            send_result(formats_of(value), True)

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
        emit({"type": "error", "name": type(e).__name__, "value": str(e), "traceback": user_traceback(e)})
    finally:
        flush_figures()
        os.environ.clear()
        os.environ.update(saved)
    sync_output(5)
    emit({"type": "__done__"})
`;
