// The code interpreter's bridge: a Python process in the sandbox (one per context) that starts a
// real Jupyter kernel there with jupyter_client (IPython's ipykernel for Python, IRkernel for R,
// Deno's kernel for JavaScript/TypeScript, a small pexpect kernel for Bash: kernels.ts names them)
// and relays it as NDJSON on stdin/stdout: a cell's IOPub messages become E2B's stdout, stderr,
// result, error and execution-count lines. The host's SIGINT becomes the kernel's interrupt.
//
// argv: bridge <spec JSON> (kernels.ts: the kernel's argv, language, files to write first)
// stdin  (host → bridge): {"code": ..., "env": {...}} per line
// stdout (bridge → host): {"type": "ready"} once, or {"type": "start_error", "value"} and exit;
//        then per cell {"type": "stdout"|"stderr", "text"} | {"type": "result", "text", "html",
//        "png", …, "chart", "data", "is_main_result"} | {"type": "error", "name", "value",
//        "traceback"} | {"type": "number_of_executions", "execution_count"} | {"type": "__done__"}
export const BRIDGE_SOURCE = String.raw`
import json, os, queue, re, signal, sys, threading, time
ANSI = re.compile(r"\x1b\[[0-9;]*m")

proto = os.fdopen(os.dup(1), "w", buffering=1)
# The kernel's own fds 1 and 2 (its start-up noise) must not mix with the protocol.
devnull = os.open(os.devnull, os.O_WRONLY)
os.dup2(devnull, 1)
plock = threading.Lock()
def emit(obj):
    with plock:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

spec = json.loads(sys.argv[1])
language = spec["language"]
# Jupyter, IPython and matplotlib write state: a private folder, not the (maybe read-only) home.
state = os.environ.get("HANDS_KERNEL_STATE") or "/tmp/hands-kernel-%d-%d" % (os.getuid(), os.getpid())
os.makedirs(state, mode=0o700, exist_ok=True)
for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "mpl"),
                 ("JUPYTER_DATA_DIR", "data"), ("JUPYTER_CONFIG_DIR", "config")):
    os.environ.setdefault(var, os.path.join(state, sub))

# ipykernel loads its debugger at start; its frozen-modules check only costs time.
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
os.environ.setdefault("DENO_DIR", os.path.join(state, "deno"))
if language in ("javascript", "typescript"):
    os.environ["NO_COLOR"] = "1"  # Deno's text/plain of a value is otherwise coloured

def write(path, text):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "w") as f:
        f.write(text)

# The kernelspec: jupyter_client finds it on JUPYTER_PATH, fills in {connection_file} and
# {resource_dir}.
spec_root = os.path.join(state, "spec")
kernel_dir = os.path.join(spec_root, "kernels", "hands")
for name, text in spec.get("files", {}).items():
    write(os.path.join(kernel_dir, os.path.basename(name)), text)
write(os.path.join(kernel_dir, "kernel.json"), json.dumps({"argv": spec["argv"], "display_name": language, "language": language}))
for name, text in spec.get("ipython_startup", {}).items():
    write(os.path.join(os.environ["IPYTHONDIR"], "profile_default", "startup", os.path.basename(name)), text)
os.environ["JUPYTER_PATH"] = spec_root

try:
    from jupyter_client import KernelManager
except Exception as e:
    emit({"type": "start_error", "value": "jupyter_client is not installed in the sandbox (%s)" % e})
    sys.exit(1)

# Notebook MIME types → E2B's result fields; the chart and DataFrame ones are ours (kernels.ts).
MIME_KEYS = {"text/plain": "text", "text/html": "html", "text/markdown": "markdown",
             "image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpeg", "application/pdf": "pdf",
             "text/latex": "latex", "application/json": "json", "application/javascript": "javascript",
             "application/vnd.hands.chart+json": "chart", "application/vnd.hands.data+json": "data"}
# One result stays well under the host's 8 MiB line limit: a bigger format is left out.
MAX_FORMAT_CHARS = 4 << 20

def unquote(text):
    # E2B gives a string value's text without its quotes ('a', "a" → a).
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and "\n" not in text:
        return text[1:-1]
    return text

def result_of(data, main):
    msg = {"type": "result", "is_main_result": main}
    extra = {}
    for mime, v in (data or {}).items():
        key = MIME_KEYS.get(mime)
        size = len(v) if isinstance(v, str) else len(json.dumps(v))
        if size > MAX_FORMAT_CHARS:
            emit({"type": "stderr", "text": "[interpreter] %s (%d characters) left out: over %d MiB\n" % (mime, size, MAX_FORMAT_CHARS >> 20)})
            continue
        if key is None:
            extra[mime] = v
        elif key == "text":
            if language in ("javascript", "typescript"):
                v = ANSI.sub("", v)
            msg["text"] = unquote(v) if main else v
        else:
            msg[key] = v
    if extra:
        msg["extra"] = extra
        for mime, v in extra.items():
            msg.setdefault(mime, v)
    return msg

# IPython's kernels (Python, Bash) talk over Unix sockets in the private folder: with TCP,
# jupyter_client picks free ports that another kernel starting at the same moment in the
# sandbox can take first (kernels then died at start when many contexts were created at once).
if language in ("python", "bash"):
    km = KernelManager(kernel_name="hands", transport="ipc", ip=os.path.join(state, "ipc"))
else:
    km = KernelManager(kernel_name="hands")
try:
    km.start_kernel(cwd=os.getcwd())
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=float(os.environ.get("HANDS_KERNEL_START_TIMEOUT", "90")))
except Exception as e:
    emit({"type": "start_error", "value": "the %s kernel did not start: %s: %s" % (language, type(e).__name__, e)})
    try:
        km.shutdown_kernel(now=True)
    except Exception:
        pass
    sys.exit(1)

# SIGINT from the host (the client gave up on a cell) is passed on as the kernel's interrupt
# (jupyter_client signals the kernel, which runs in a session of its own); the bridge carries on.
def interrupt(*_):
    try:
        km.interrupt_kernel()
    except Exception:
        pass
signal.signal(signal.SIGINT, interrupt)

# SIGTERM from the host (the context is removed or restarted) ends the kernel too: it runs in a
# session of its own, so killing the bridge's process group alone would leave it running.
def terminate(*_):
    try:
        pid = km.provisioner.process.pid
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            os.kill(pid, signal.SIGKILL)
    except Exception:
        pass
    os._exit(0)
signal.signal(signal.SIGTERM, terminate)

def env_code(env):
    """Code that sets env vars for one cell, and code that puts them back after it."""
    if not env:
        return None, None
    j = json.dumps(env)
    if language == "python":
        return ("import os as __h_os\n__h_saved = {k: __h_os.environ.get(k) for k in %s}\n__h_os.environ.update(%s)" % (j, j),
                "[__h_os.environ.pop(k, None) if v is None else __h_os.environ.__setitem__(k, v) for k, v in __h_saved.items()]\ndel __h_saved")
    if language == "r":
        keys = "c(%s)" % ", ".join(json.dumps(k) for k in env)
        sets = ", ".join("%s = %s" % (json.dumps(k), json.dumps(v)) for k, v in env.items())
        return (".h_saved <- Sys.getenv(%s, unset = NA, names = TRUE); do.call(Sys.setenv, list(%s))" % (keys, sets),
                "for (.h_k in names(.h_saved)) if (is.na(.h_saved[[.h_k]])) Sys.unsetenv(.h_k) else do.call(Sys.setenv, setNames(list(.h_saved[[.h_k]]), .h_k)); rm(.h_saved, .h_k)")
    if language in ("javascript", "typescript"):
        return ("globalThis.__hSaved = Object.fromEntries(Object.keys(%s).map((k) => [k, Deno.env.get(k)])); for (const [k, v] of Object.entries(%s)) Deno.env.set(k, v);" % (j, j),
                "for (const [k, v] of Object.entries(globalThis.__hSaved)) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v); delete globalThis.__hSaved;")
    if language == "bash":
        q = lambda s: "'" + s.replace("'", "'\\''") + "'"
        # (The "$" "{" pairs keep a template literal's interpolation out of this source.)
        save = " ".join("__h_%d=$" "{%s+x}$" "{%s-}" % (i, k, k) for i, k in enumerate(env) if k.replace("_", "a").isalnum())
        sets = "; ".join("export %s=%s" % (k, q(v)) for k, v in env.items() if k.replace("_", "a").isalnum())
        rest = "; ".join("if [ -n \"$" "{__h_%d:0:1}\" ]; then export %s=\"$" "{__h_%d:1}\"; else unset %s; fi" % (i, k, i, k)
                         for i, k in enumerate(env) if k.replace("_", "a").isalnum())
        return ("%s; %s" % (save, sets) if save else sets, rest)
    return None, None

# Deno's kernel publishes a cell's stream output and value from a queue of its own, after the
# request's idle status at times, each labelled with the request being run when it is sent: a
# late value of one request comes labelled with the next. So after a Deno request's idle the
# bridge sends a marker request whose one output goes through that same queue: the request's
# output is whatever arrives (labelled with it or with the marker) before the marker's text.
DENO = language in ("javascript", "typescript")

def drain(mid, relay):
    """Passes a request's IOPub messages to relay(msg_type, content, is_own) until it is over;
    False when the kernel died."""
    ids = {mid}
    marker = None
    deadline = None
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            if not km.is_alive():
                return False
            if deadline is not None and time.monotonic() > deadline:
                return True  # (the marker never came: a kernel that cannot broadcast)
            continue
        parent = msg["parent_header"].get("msg_id")
        if parent not in ids:
            continue
        t, c = msg["msg_type"], msg["content"]
        if t == "status":
            if parent == mid and c.get("execution_state") == "idle":
                if not DENO:
                    return True
                marker = "hands-end-" + os.urandom(12).hex()
                ids.add(kc.execute("Deno.jupyter.broadcast('stream', {name: 'stdout', text: %s}); void 0" % json.dumps(marker),
                                   store_history=False, allow_stdin=False))
                deadline = time.monotonic() + 30
            continue
        if marker is not None and t == "stream" and c.get("text") == marker:
            return True
        relay(t, c, parent == mid)

def run_quiet(code):
    """Runs helper code without history or output; waits until it is over."""
    if DENO:
        # (Deno's kernel does not run a silent request at all: its output is dropped instead.)
        drain(kc.execute(code + "; void 0", store_history=False, allow_stdin=False), lambda *_: None)
        return
    mid = kc.execute(code, silent=True, store_history=False, allow_stdin=False)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            reply = kc.get_shell_msg(timeout=1)
        except queue.Empty:
            continue
        if reply["parent_header"].get("msg_id") == mid:
            return

def relay_cell(t, c, own):
    if t == "execute_input" and own and c.get("execution_count") is not None:
        emit({"type": "number_of_executions", "execution_count": c["execution_count"]})
    elif t == "stream":
        text = c.get("text", "")
        if DENO:
            text = ANSI.sub("", text)  # Deno's console.log colours values whatever NO_COLOR says
        emit({"type": "stdout" if c.get("name") == "stdout" else "stderr", "text": text})
    elif t == "execute_result":
        emit(result_of(c.get("data"), True))
    elif t == "display_data":
        emit(result_of(c.get("data"), False))
    elif t == "error":
        emit({"type": "error", "name": c.get("ename", ""), "value": c.get("evalue", ""),
              "traceback": "\n".join(c.get("traceback") or [])})

def run_cell(code, env):
    set_env, restore_env = env_code({str(k): str(v) for k, v in (env or {}).items()})
    if set_env:
        run_quiet(set_env)
    if not drain(kc.execute(code, store_history=True, allow_stdin=False), relay_cell):
        emit({"type": "error", "name": "KernelDied", "value": "the %s kernel exited" % language, "traceback": ""})
        emit({"type": "__done__"})
        sys.exit(1)
    if restore_env:
        run_quiet(restore_env)
    emit({"type": "__done__"})

emit({"type": "ready"})
for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    run_cell(req.get("code", ""), req.get("env"))
try:
    km.shutdown_kernel(now=True)
except Exception:
    pass
os._exit(0)  # (no interpreter teardown: zmq's finalisers only print noise then)
`;
