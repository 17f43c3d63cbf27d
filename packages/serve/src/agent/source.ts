// The in-sandbox agent: a small Python program the service starts as the sandbox's first
// command. It connects back to the host over a Unix socket in the workspace and runs what the
// host asks for (processes with piped stdio, file operations, directory watches) as the
// sandbox's own unprivileged user, so every path it touches is resolved inside the sandbox's
// mount namespace — the host never follows a sandbox path itself.
//
// Wire format (one JSON object per line, both ways):
//   host → agent  {"id": n, "op": "...", ...args}
//   agent → host  {"id": n, "ok": result} | {"id": n, "err": [code, message]}
//                 {"ev": "out", "pid": p, "fd": 1|2, "data": b64} | {"ev": "exit", "pid": p, ...}
//                 (a process started with a pty has one output stream, sent as fd 1)
//                 {"ev": "fs", "wid": w, "name": ..., "type": ..., "entry"?: {...}}
// Python rather than Node: ~10 MB per sandbox instead of ~40 MB, and it starts in ~20 ms.
export const AGENT_SOURCE = String.raw`
import base64, errno, fcntl, json, os, pwd, queue, select, shutil, signal, socket, stat, struct, subprocess, sys, termios, threading, time

HOME = os.environ.get("HANDS_AGENT_HOME", "/home/user")
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(os.environ["HANDS_AGENT_SOCKET"])
wlock = threading.Lock()
procs = {}
ptys = {}
watches = {}
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("HANDS_AGENT")}

def send(obj):
    data = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
    with wlock:
        sock.sendall(data)

class Fail(Exception):
    def __init__(self, code, message):
        self.code, self.message = code, message

def os_fail(e, path):
    code = {errno.ENOENT: "not_found", errno.EEXIST: "already_exists", errno.EACCES: "permission_denied",
            errno.EPERM: "permission_denied", errno.EROFS: "permission_denied", errno.ENOTDIR: "invalid_argument", errno.EISDIR: "invalid_argument",
            errno.ENOTEMPTY: "failed_precondition", errno.ENOSPC: "resource_exhausted", errno.EFBIG: "resource_exhausted"}
    return Fail(code.get(e.errno, "internal"), "%s: %s" % (path, e.strerror))

def resolve(path, home=HOME):
    if not isinstance(path, str) or "\0" in path:
        raise Fail("invalid_argument", "bad path")
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.normpath(path if path.startswith("/") else os.path.join(home, path))

def perm_string(mode):
    kind = "d" if stat.S_ISDIR(mode) else "l" if stat.S_ISLNK(mode) else "-"
    bits = ""
    for who in range(2, -1, -1):
        m = (mode >> (who * 3)) & 7
        bits += ("r" if m & 4 else "-") + ("w" if m & 2 else "-") + ("x" if m & 1 else "-")
    return kind + bits

def owner(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)

def group_name(gid):
    # A group by its own table; the sandbox's unnamed primary group (docker runs it as a host
    # gid) is its user's, as E2B's "user" group is.
    try:
        import grp
        return grp.getgrgid(gid).gr_name
    except (KeyError, ImportError):
        return owner(os.getuid()) if gid == os.getgid() else str(gid)

def entry(path):
    try:
        st = os.lstat(path)
    except OSError as e:
        raise os_fail(e, path)
    target = None
    kind = "dir" if stat.S_ISDIR(st.st_mode) else "file"
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        try:
            kind = "dir" if stat.S_ISDIR(os.stat(path).st_mode) else "file"
        except OSError:
            kind = "file"
    e = {"name": os.path.basename(path) or "/", "type": kind, "path": path, "size": st.st_size,
         "mode": stat.S_IMODE(st.st_mode), "permissions": perm_string(st.st_mode),
         "owner": owner(st.st_uid), "group": group_name(st.st_gid), "mtime": st.st_mtime_ns}
    if target is not None:
        e["symlink"] = target
    else:
        meta = read_meta(path)
        if meta:
            e["meta"] = meta
    return e

# File metadata (envd 0.6.2): user-defined key/values kept as "user.e2b.<key>" extended attributes.
META_PREFIX = "user.e2b."

def read_meta(path):
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return None
    out = {}
    for n in names:
        if n.startswith(META_PREFIX):
            try:
                out[n[len(META_PREFIX):]] = os.getxattr(path, n, follow_symlinks=False).decode("ascii", "replace")
            except OSError:
                pass
    return out

def replace_meta(fd, path, meta):
    # Each upload replaces the file's metadata: keys it does not send are removed.
    try:
        for n in os.listxattr(fd):
            if n.startswith(META_PREFIX) and n[len(META_PREFIX):] not in meta:
                os.removexattr(fd, n)
        for k, v in meta.items():
            os.setxattr(fd, META_PREFIX + k, v.encode("ascii"))
    except OSError as e:
        if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP) and not meta:
            return
        if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            raise Fail("failed_precondition", "%s: this sandbox's filesystem keeps no file metadata (extended attributes are not supported)" % path)
        if e.errno in (errno.ENOSPC, errno.E2BIG, errno.ERANGE):
            raise Fail("invalid_argument", "%s: the file metadata is too large" % path)
        raise os_fail(e, path)

def emit(pid, fd, data, state):
    """Sends output read from a process (the caller holds state["lock"]); after its exit went out,
    what a left-behind child still writes is read and dropped."""
    state["last"] = time.monotonic()
    if not state["ended"]:
        send({"ev": "out", "pid": pid, "fd": fd, "data": base64.b64encode(data).decode()})

def pump(pid, fd, stream, state):
    # Wait for data without the lock, then read and send it under the lock: bytes taken out of
    # the pipe are always sent before the waiter can decide the output is over (a reader that
    # read the last bytes and then did not get the CPU for a while lost them to the exit).
    poller = select.poll()
    poller.register(stream.fileno(), select.POLLIN)
    while True:
        poller.poll()
        with state["lock"]:
            try:
                data = os.read(stream.fileno(), 65536)
            except OSError:
                break
            if not data:
                break
            emit(pid, fd, data, state)

class Pty:
    """The master side of a process's pseudo-terminal, non-blocking. Its reader closes it when the
    process is gone (under the lock, so no write or resize ever touches a closed or reused fd);
    input goes through a queue to a writer thread, so a program that stops reading its terminal
    holds up that thread only, never the agent's request loop."""
    MAX_PENDING = 8 << 20

    def __init__(self, master):
        os.set_blocking(master, False)
        self.master = master
        self.closed = False
        self.done = threading.Event()
        self.inbox = queue.Queue()
        self.pending = 0
        self.lock = threading.Lock()

    def write(self, data):
        with self.lock:
            if self.closed:
                raise Fail("failed_precondition", "the terminal is closed")
            if self.pending + len(data) > self.MAX_PENDING:
                raise Fail("resource_exhausted", "the terminal is not reading its input")
            self.pending += len(data)
        self.inbox.put(data)

    def resize(self, size):
        with self.lock:
            if self.closed:
                raise Fail("not_found", "the terminal is closed")
            # The kernel sends SIGWINCH to the terminal's foreground job when the size changes.
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, size)

    def writer(self):
        while not self.done.is_set():
            try:
                data = self.inbox.get(timeout=0.5)
            except queue.Empty:
                continue
            view = memoryview(data)
            while view and not self.done.is_set():
                with self.lock:
                    if self.closed:
                        break
                    try:
                        view = view[os.write(self.master, view):]
                    except BlockingIOError:
                        pass
                    except OSError:
                        break
                if view:
                    self.done.wait(0.01)
            with self.lock:
                self.pending -= len(data)

    def reader(self, pid, state):
        poller = select.poll()
        poller.register(self.master, select.POLLIN)
        try:
            # After the process ends (done), what a left-behind child still writes is not read:
            # closing the master hangs the terminal up for it.
            while not self.done.is_set():
                if not poller.poll(200):
                    continue
                with state["lock"]:
                    try:
                        data = os.read(self.master, 65536)
                    except BlockingIOError:
                        continue
                    except OSError:
                        break
                    if not data:
                        break
                    emit(pid, 1, data, state)
        finally:
            with self.lock:
                self.closed = True
                os.close(self.master)
            self.done.set()

def winsize(size):
    if not isinstance(size, dict):
        raise Fail("invalid_argument", "pty.size must be an object")
    try:
        cols, rows = int(size.get("cols") or 0), int(size.get("rows") or 0)
    except (TypeError, ValueError):
        raise Fail("invalid_argument", "pty size must be numbers")
    if not (1 <= cols <= 65535 and 1 <= rows <= 65535):
        raise Fail("invalid_argument", "pty size must be 1..65535 columns and rows")
    return struct.pack("HHHH", rows, cols, 0, 0)

def take_terminal():
    # In the child, after setsid: the pty (its stdin) becomes the controlling terminal, so
    # Ctrl-C, Ctrl-Z and hangups reach the foreground job the way they do in a real terminal.
    # (A preexec_fn in a threaded program must not take locks or import: this one does neither.)
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)

def unread(fd):
    """Bytes waiting in a pipe or terminal (0 if it is closed)."""
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0

def waiter(p, readers, state):
    code = p.wait()
    # Output still in the pipes is sent first; a grandchild holding them open does not hold the
    # end: once nothing was read for 0.1 s and nothing waits unread, the exit goes out. Checked
    # and sent under the readers' lock, so no read is half done (its bytes out of the pipe, not
    # yet sent) and no output of this process follows its exit.
    while True:
        for r, _ in readers:
            r.join(0.02)
        with state["lock"]:
            if all(not r.is_alive() for r, _ in readers) or (
                    time.monotonic() - state["last"] > 0.1 and not any(r.is_alive() and unread(fd) for r, fd in readers)):
                state["ended"] = True
                procs.pop(p.pid, None)
                t = ptys.pop(p.pid, None)
                if t is not None:
                    t.done.set()
                ev = {"ev": "exit", "pid": p.pid, "exited": code >= 0, "code": code if code >= 0 else 128 - code}
                if code < 0:
                    ev["signal"] = signal.Signals(-code).name
                send(ev)
                return

def op_start(m):
    user = m.get("user") or "user"
    if user not in ("user", "root"):
        raise Fail("invalid_argument", "invalid user: '%s'" % user)
    cwd = resolve(m.get("cwd") or HOME)
    if not os.path.isdir(cwd):
        raise Fail("invalid_argument", "cwd '%s' does not exist" % cwd)
    env = dict(BASE_ENV)
    env.update({"HOME": HOME, "USER": user, "LOGNAME": user, "PWD": cwd})
    env.update(m.get("sandboxEnvs") or {})
    env.update(m.get("envs") or {})
    argv = [m["cmd"]] + list(m.get("args") or [])
    state = {"last": time.monotonic(), "lock": threading.Lock(), "ended": False}
    if m.get("pty") is not None:
        size = winsize(m["pty"])
        master, slave = os.openpty()
        try:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
            p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
                                 start_new_session=True, preexec_fn=take_terminal, bufsize=0)
        except OSError as e:
            os.close(master)
            raise os_fail(e, m["cmd"])
        except subprocess.SubprocessError as e:
            os.close(master)
            raise Fail("internal", "could not start on a terminal: %s" % e)
        finally:
            os.close(slave)
        t = Pty(master)
        ptys[p.pid] = t
        threading.Thread(target=t.writer, daemon=True).start()
        readers = [(threading.Thread(target=t.reader, args=(p.pid, state), daemon=True), master)]
    else:
        try:
            p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE if m.get("stdin") else subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, bufsize=0)
        except OSError as e:
            raise os_fail(e, m["cmd"])
        readers = [(threading.Thread(target=pump, args=(p.pid, 1, p.stdout, state), daemon=True), p.stdout.fileno()),
                   (threading.Thread(target=pump, args=(p.pid, 2, p.stderr, state), daemon=True), p.stderr.fileno())]
    procs[p.pid] = p
    # The reply goes first: the host must know the pid before any of its output arrives.
    send({"id": m["id"], "ok": {"pid": p.pid}})
    for r, _ in readers:
        r.start()
    threading.Thread(target=waiter, args=(p, readers, state), daemon=True).start()
    return None

def proc_of(m):
    p = procs.get(m.get("pid"))
    if p is None:
        raise Fail("not_found", "process with pid %s not found" % m.get("pid"))
    return p

def op_input(m):
    p = proc_of(m)
    t = ptys.get(p.pid)
    if m.get("pty"):
        if t is None:
            raise Fail("failed_precondition", "process %s has no pty" % p.pid)
        try:
            t.write(base64.b64decode(m["data"]))
        except ValueError as e:
            raise Fail("invalid_argument", "pty input: %s" % e)
        return {}
    if t is not None:
        raise Fail("failed_precondition", "process %s has a pty: send pty input, not stdin" % p.pid)
    if p.stdin is None:
        raise Fail("failed_precondition", "stdin is not enabled for this process")
    try:
        p.stdin.write(base64.b64decode(m["data"]))
    except (OSError, ValueError) as e:
        raise Fail("failed_precondition", "stdin: %s" % e)
    return {}

def op_resize(m):
    p = proc_of(m)
    t = ptys.get(p.pid)
    if t is None:
        raise Fail("failed_precondition", "process %s has no pty" % p.pid)
    t.resize(winsize(m.get("size")))
    return {}

def op_close_stdin(m):
    p = proc_of(m)
    if p.stdin is not None:
        p.stdin.close()
    return {}

def op_signal(m):
    p = proc_of(m)
    sig = {9: signal.SIGKILL, 2: signal.SIGINT}.get(m.get("signal"), signal.SIGTERM)
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass
    return {}

def op_stat(m):
    return entry(resolve(m["path"]))

def op_mkdir(m):
    path = resolve(m["path"])
    if os.path.lexists(path):
        raise Fail("already_exists", "directory '%s' already exists" % path)
    try:
        os.makedirs(path)
    except OSError as e:
        raise os_fail(e, path)
    return entry(path)

def op_move(m):
    src, dst = resolve(m["source"]), resolve(m["destination"])
    try:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.rename(src, dst)
    except OSError as e:
        raise os_fail(e, src)
    return entry(dst)

def op_list(m):
    root = resolve(m["path"])
    depth = max(1, int(m.get("depth") or 1))
    if not os.path.isdir(root):
        if os.path.lexists(root):
            raise Fail("invalid_argument", "path '%s' is not a directory" % root)
        raise Fail("not_found", "directory '%s' does not exist" % root)
    out = []
    def walk(d, level):
        try:
            names = sorted(os.listdir(d))
        except OSError as e:
            raise os_fail(e, d)
        for n in names:
            p = os.path.join(d, n)
            try:
                e = entry(p)
            except Fail:
                continue
            out.append(e)
            if level < depth and e["type"] == "dir" and "symlink" not in e:
                walk(p, level + 1)
    walk(root, 1)
    return {"entries": out}

def op_remove(m):
    path = resolve(m["path"])
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        # As envd's (os.RemoveAll): what is not there is already removed.
        pass
    except OSError as e:
        raise os_fail(e, path)
    return {}

def op_read(m):
    # Pulled a piece at a time by the host, so a slow client never makes anyone buffer a file.
    path = resolve(m["path"])
    length = max(1, min(int(m.get("length") or 262144), 1048576))
    try:
        if os.path.isdir(path):
            raise Fail("invalid_argument", "path '%s' is a directory" % path)
        with open(path, "rb") as f:
            f.seek(int(m.get("offset") or 0))
            b = f.read(length)
    except OSError as e:
        raise os_fail(e, path)
    return {"data": base64.b64encode(b).decode(), "eof": len(b) < length}

def op_write(m):
    path = resolve(m["path"])
    try:
        if os.path.isdir(path):
            raise Fail("invalid_argument", "path '%s' is a directory" % path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab" if m.get("append") else "wb") as f:
            if not m.get("append") and isinstance(m.get("meta"), dict):
                replace_meta(f.fileno(), path, m["meta"])
            f.write(base64.b64decode(m.get("data") or ""))
    except OSError as e:
        raise os_fail(e, path)
    return entry(path)

def scan(root, recursive):
    seen = {}
    def walk(d):
        try:
            it = list(os.scandir(d))
        except OSError:
            return
        for e in it:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            seen[os.path.relpath(e.path, root)] = (st.st_mtime_ns, st.st_size, st.st_mode)
            if recursive and e.is_dir(follow_symlinks=False):
                walk(e.path)
    walk(root)
    return seen

def watcher(wid, root, recursive, stop, entries):
    def event(name, kind):
        ev = {"ev": "fs", "wid": wid, "name": name, "type": kind}
        # envd 0.6.3's includeEntry: the entry as it is now, where the path still exists.
        if entries and kind != "remove":
            try:
                ev["entry"] = entry(os.path.join(root, name))
            except Fail:
                pass
        send(ev)
    before = scan(root, recursive)
    while not stop.wait(0.05):
        if not os.path.isdir(root):
            send({"ev": "fs_end", "wid": wid, "err": "watched directory was removed"})
            return
        now = scan(root, recursive)
        for name, sig in now.items():
            old = before.get(name)
            if old is None:
                event(name, "create")
                # A file that already has content when first seen was also written (inotify
                # reports both); an empty one gets its write when its content comes.
                if stat.S_ISREG(sig[2]) and sig[1] > 0:
                    event(name, "write")
            elif old[0] != sig[0] or old[1] != sig[1]:
                event(name, "write")
            elif old[2] != sig[2]:
                event(name, "chmod")
        for name in before:
            if name not in now:
                event(name, "remove")
        before = now

def op_watch(m):
    root = resolve(m["path"])
    if not os.path.isdir(root):
        raise Fail("not_found", "directory '%s' does not exist" % root)
    stop = threading.Event()
    watches[m["wid"]] = stop
    threading.Thread(target=watcher, args=(m["wid"], root, bool(m.get("recursive")), stop, bool(m.get("entries"))), daemon=True).start()
    return {}

def op_unwatch(m):
    stop = watches.pop(m.get("wid"), None)
    if stop:
        stop.set()
    return {}

def op_ping(m):
    return {}

def splice(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass

def bridge(c, u):
    t = threading.Thread(target=splice, args=(u, c), daemon=True)
    t.start()
    splice(c, u)
    t.join()
    c.close()
    u.close()

def op_port(m):
    # getHost traffic (port-bridge.ts): connect to the port here, then hand the bytes to the
    # host's bridge socket under the key the host chose.
    port = m.get("port")
    if not isinstance(port, int) or not 0 < port < 65536:
        raise Fail("invalid_argument", "bad port")
    c, last = None, None
    for host in ("127.0.0.1", "::1"):
        try:
            c = socket.create_connection((host, port), timeout=5)
            break
        except OSError as e:
            last = e
    if c is None:
        raise Fail("port_closed", "nothing listens on port %d in the sandbox (%s)" % (port, getattr(last, "strerror", None) or last))
    c.settimeout(None)
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        u.connect(os.environ["HANDS_AGENT_BRIDGE"])
        u.sendall((json.dumps({"bridge": str(m.get("key", ""))}) + "\n").encode())
    except (OSError, KeyError) as e:
        c.close()
        u.close()
        raise Fail("unavailable", "the host's bridge does not answer: %s" % e)
    threading.Thread(target=bridge, args=(c, u), daemon=True).start()
    return {}

def disk_usage(root, cap=100000):
    # Bounded: a huge or hostile tree costs at most cap entries (the figure is then a lower bound).
    used, seen, stack = 0, 0, [root]
    while stack and seen < cap:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for e in it:
                seen += 1
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                used += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode):
                    stack.append(e.path)
    return used, seen >= cap

def op_stats(m):
    # The sandbox's own view: /proc is its pid namespace, so every process here is the sandbox's.
    page = os.sysconf("SC_PAGE_SIZE")
    ticks, rss, pids = 0, 0, 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                # After the last ")": the name may hold spaces and parentheses.
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
            rss += int(fields[21]) * page
            pids += 1
        except (OSError, IndexError, ValueError):
            pass
    used, partial = disk_usage(HOME)
    try:
        vfs = os.statvfs(HOME)
        total = vfs.f_blocks * vfs.f_frsize
    except OSError:
        total = 0
    return {"ticks": ticks, "hz": os.sysconf("SC_CLK_TCK"), "rss": rss, "pids": pids,
            "diskUsed": used, "diskPartial": partial, "diskTotal": total}

OPS = {"start": op_start, "input": op_input, "resize": op_resize, "close_stdin": op_close_stdin, "signal": op_signal,
       "stat": op_stat, "mkdir": op_mkdir, "move": op_move, "list": op_list, "remove": op_remove,
       "read": op_read, "write": op_write, "watch": op_watch, "unwatch": op_unwatch, "ping": op_ping,
       "stats": op_stats, "port": op_port}

def handle(m):
    try:
        f = OPS.get(m.get("op"))
        if f is None:
            raise Fail("unimplemented", "unknown operation")
        result = f(m)
        if result is not None:
            send({"id": m["id"], "ok": result})
    except Fail as e:
        send({"id": m["id"], "err": [e.code, e.message]})
    except Exception as e:
        send({"id": m["id"], "err": ["internal", "%s: %s" % (type(e).__name__, e)]})

def main():
    # root's home, as E2B's templates have it (a cwd for code contexts, user "root"), where the
    # root folder is writable (bwrap); the docker backend mounts one.
    try:
        os.makedirs("/root", mode=0o700, exist_ok=True)
    except OSError:
        pass
    send({"hello": os.environ.get("HANDS_AGENT_NONCE", "")})
    buf = b""
    while True:
        data = sock.recv(1 << 20)
        if not data:
            break
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            m = json.loads(line)
            # Slow operations (file streams, process start) must not hold up the rest.
            if m.get("op") in ("read", "write", "list", "remove", "move", "stats", "port"):
                threading.Thread(target=handle, args=(m,), daemon=True).start()
            else:
                handle(m)
    for p in list(procs.values()):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass

main()
`;
