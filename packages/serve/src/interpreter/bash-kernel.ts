// The Bash kernel: Debian ships no bash_kernel, so this is a Jupyter kernel of its own built on
// ipykernel's documented wrapper-kernel base class (ipykernel.kernelbase.Kernel): one long-lived
// bash per context (variables, cwd and functions persist between cells), its stdout and stderr
// streamed as they come, the cell's exit status as an error when it is not 0. An interrupt
// (SIGINT to the process group) stops the running command; bash itself traps it and carries on.
export const BASH_KERNEL_SOURCE = String.raw`
import os, signal, subprocess, threading
from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel

class BashKernel(Kernel):
    implementation = "hands-bash"
    implementation_version = "1"
    language = "bash"
    language_version = "5"
    language_info = {"name": "bash", "mimetype": "text/x-sh", "file_extension": ".sh"}
    banner = "bash"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.mark = "__hands_done_%s__" % os.urandom(8).hex()
        self.bash = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        # A trap (not an ignore, which children would inherit) keeps bash alive on SIGINT.
        self.bash.stdin.write(b"trap 'echo interrupted >&2' INT\n")
        self.done = threading.Event()
        self.status = 0
        self.errs_done = threading.Event()
        threading.Thread(target=self.pump, args=(self.bash.stdout, "stdout"), daemon=True).start()
        threading.Thread(target=self.pump, args=(self.bash.stderr, "stderr"), daemon=True).start()

    def pump(self, f, name):
        mark = self.mark.encode()
        for line in iter(f.readline, b""):
            at = line.find(mark)
            if at >= 0:
                # A last line without a newline comes just before the marker.
                if at > 0:
                    self.send_response(self.iopub_socket, "stream", {"name": name, "text": line[:at].decode("utf-8", "replace")})
                if name == "stdout":
                    try:
                        self.status = int(line[at + len(mark):].strip() or 0)
                    except ValueError:
                        self.status = 1
                    self.done.set()
                else:
                    self.errs_done.set()
                continue
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": line.decode("utf-8", "replace")})
        self.done.set()
        self.errs_done.set()

    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):
        self.done.clear()
        self.errs_done.clear()
        if self.bash.poll() is not None:
            return self.fail("BashExited", "bash exited with status %d" % self.bash.returncode)
        script = code + "\n__h_s=$?; printf '%s%%s\\n' \"$__h_s\"; printf '%s\\n' >&2\n" % (self.mark, self.mark)
        try:
            self.bash.stdin.write(script.encode())
        except BrokenPipeError:
            return self.fail("BashExited", "bash exited")
        while not self.done.wait(0.1):
            pass
        self.errs_done.wait(2)
        if self.status != 0:
            return self.fail("ExitCode", "the last command exited with status %d" % self.status, silent)
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def fail(self, name, value, silent=False):
        content = {"ename": name, "evalue": value, "traceback": [value]}
        if not silent:
            self.send_response(self.iopub_socket, "error", content)
        return dict(content, status="error", execution_count=self.execution_count)

    def do_shutdown(self, restart):
        try:
            self.bash.kill()
        except Exception:
            pass
        return {"status": "ok", "restart": restart}

IPKernelApp.launch_instance(kernel_class=BashKernel)
`;
