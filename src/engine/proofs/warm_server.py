# explain --run's warm runs, the server: one Python per explain session that imports
# torch and torch._dynamo once (4 of a failing run's 4.5 s), then forks a child per run
# (warm_child.py makes it the run). Started by the first run's client (warm_client.py)
# in the session's private folder, with the runs' environment less the run's own
# variables, in a session of its own:
#
#     PYTHON warm_server.py FOLDER OWNER_PID
#
# A client connects to FOLDER/sock and sends its stdin, stdout and stderr (SCM_RIGHTS)
# and a request (argv, environment, working folder, its run folder); the answer is lines:
# "pid N" (the child, in a process group of its own), then "exit N" or "signal N"; or
# "cold WHY" when this server cannot run it as a fresh interpreter would. A client gone
# before its child is a killed run: the child's group is killed. The server ends, its
# children killed, when asked ({"stop": true}), when FOLDER goes, when OWNER_PID does
# (sitepatch or its agent), or after _IDLE seconds without a run.
import os
import signal
import socket
import struct
import sys
import time

_IDLE = 600
# The environment as started: importing torch sets variables of its own (TORCHINDUCTOR_CACHE_DIR).
_START_ENV = dict(os.environ)
_HERE = os.path.dirname(os.path.abspath(__file__))
# Not this folder on the path: the runs' own sys.path is what the server imports with.
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _HERE:
    del sys.path[0]


def _own(key):
    # sitepatch's own variables (its hooks read them in the child), and the shell's `_`.
    return key.startswith("SITEPATCH_") or key == "_"


def _same_env(run_env, folder):
    # What the runs may set apart: their own variables and the run's folder at the head
    # of PYTHONPATH. Any other difference is one torch may have read at import: that
    # run goes cold.
    mine = dict((k, v) for k, v in _START_ENV.items() if not _own(k))
    theirs = dict((k, v) for k, v in run_env.items() if not _own(k))
    parts = theirs.get("PYTHONPATH", "").split(os.pathsep)
    if parts[0] != folder:
        return "its PYTHONPATH does not start with its run folder"
    if len(parts) > 1:
        theirs["PYTHONPATH"] = os.pathsep.join(parts[1:])
    else:
        theirs.pop("PYTHONPATH", None)
    for key in sorted(set(mine) | set(theirs)):
        if mine.get(key) != theirs.get(key):
            return "its environment differs from the warm server's in %s" % key
    return None


def _capture(folder, work):
    # What `work` prints (an import's warning) is the runs': kept, for each child to
    # write where a cold run would have, and this server's output then goes to its log.
    out_path, err_path = os.path.join(folder, "import.out"), os.path.join(folder, "import.err")
    for fd, path in ((1, out_path), (2, err_path)):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, fd)
        os.close(f)
    try:
        work()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        log = os.open(os.path.join(folder, "server.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        for fd in (1, 2):
            os.dup2(log, fd)
        os.close(log)
    with open(out_path, "rb") as f_out, open(err_path, "rb") as f_err:
        return f_out.read(), f_err.read()


def _import_torch():
    # CUDA is not touched: children may use it.
    import torch
    import torch._dynamo  # noqa: F401
    _check_cuda()


def _check_cuda():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raise RuntimeError("importing torch initialized CUDA, which a forked run could not use")


def _import_changes():
    # What the import did to the environment, which a child does again over the run's own.
    keys = set(_START_ENV) | set(os.environ)
    return dict((k, os.environ.get(k)) for k in keys if os.environ.get(k) != _START_ENV.get(k))


class Server(object):
    def __init__(self, folder, owner):
        import selectors
        self.folder, self.owner = folder, owner
        self.sel = selectors.DefaultSelector()
        self.children = {}  # pid -> the client's connection
        self.last = time.time()
        self.printed = (b"", b"")
        self.broken = None  # why every run now goes cold
        self.tried = set()  # modules learned (or tried: one that fails here is not retried)
        # The packages a child's imports may be learned from: torch's and what it
        # imported, never the user's (a run that patches what the server imported is cold).
        self.tops = set(name.split(".")[0] for name in sys.modules)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *a: None)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind("sock")  # the folder is the working folder: no path length limit
        self.listener.listen(64)
        self.sel.register(self.listener, 1, "accept")
        self.sel.register(self.wake_r, 1, "reap")

    def gone(self):
        if not os.path.isdir(self.folder) or not os.path.exists("sock"):
            return True
        try:
            os.kill(self.owner, 0)
        except ProcessLookupError:
            return True
        except OSError:
            pass
        return not self.children and time.time() - self.last > _IDLE

    def serve(self):
        # Returns only in a forked child: the run to make there.
        while not self.gone():
            for key, _ in self.sel.select(1.0):
                if key.data == "accept":
                    job = self.accept()
                    if job is not None:
                        return job
                elif key.data == "reap":
                    self.reap()
                else:
                    self.client_gone(key.fileobj, key.data)
        self.shutdown()

    def accept(self):
        conn, _ = self.listener.accept()
        self.last = time.time()
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] != os.geteuid():
                conn.close()
                return None
            conn.settimeout(10)
            request, fds = _receive(conn)
            conn.settimeout(None)
        except (OSError, ValueError):
            conn.close()
            return None
        if request.get("stop"):
            for fd in fds:
                os.close(fd)
            self.shutdown(conn)
        why = self.refuse(request)
        if why:
            for fd in fds:
                os.close(fd)
            _reply(conn, "cold " + why)
            conn.close()
            return None
        pid = os.fork()
        if pid == 0:
            return self.become_child(conn, request, fds)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first, or is gone already
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn
        self.sel.register(conn, 1, pid)
        _reply(conn, "pid %d" % pid)
        return None

    def learn(self, pid):
        # The modules a run imported that the server had not (what dynamo's first compile
        # imports: 0.6 s of a 0.8 s compile), imported here for the runs after it.
        path = os.path.join(self.folder, "learned.%d" % pid)
        try:
            with open(path) as f:
                names = f.read().split()
            os.unlink(path)
        except OSError:
            return
        names = [n for n in names if n not in sys.modules and n not in self.tried and n.split(".")[0] in self.tops]
        if not names or self.broken:
            return

        self.tried.update(names)
        started = time.time()

        def work():
            import importlib
            for name in names:
                try:
                    importlib.import_module(name)
                except Exception:  # noqa: BLE001 -- a run imports what it can; so does this
                    pass
            _check_cuda()

        try:
            out, err = _capture(self.folder, work)
            self.printed = (self.printed[0] + out, self.printed[1] + err)
            sys.stderr.write("learned %d modules from run %d in %.2f s\n" % (len(names), pid, time.time() - started))
        except Exception as e:  # noqa: BLE001
            self.broken = "the warm server: %s" % e

    def refuse(self, request):
        if self.broken:
            return self.broken
        if os.path.realpath(request.get("executable", "")) != os.path.realpath(sys.executable):
            return "its Python (%s) is not the warm server's (%s)" % (request.get("executable"), sys.executable)
        return _same_env(request.get("env", {}), request.get("folder", ""))

    def become_child(self, conn, request, fds):
        os.setpgid(0, 0)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for c in self.children.values():
            c.close()
        self.sel.close()
        self.listener.close()
        conn.close()
        os.close(self.wake_r)
        os.close(self.wake_w)
        return {"request": request, "fds": fds, "printed": self.printed, "env_changes": _import_changes(),
                "folder": self.folder}

    def reap(self):
        try:
            os.read(self.wake_r, 4096)
        except BlockingIOError:
            pass
        for pid in list(self.children):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 255 << 8
            if done != pid:
                continue
            conn = self.children.pop(pid)
            self.sel.unregister(conn)
            if os.WIFSIGNALED(status):
                _reply(conn, "signal %d" % os.WTERMSIG(status))
            else:
                _reply(conn, "exit %d" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else 255))
            conn.close()
            self.last = time.time()
            self.learn(pid)

    def client_gone(self, conn, pid):
        # The client says nothing after its request: readable is its end (killed).
        try:
            if conn.recv(1):
                return
        except OSError:
            pass
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass

    def shutdown(self, conn=None):
        for pid in list(self.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in list(self.children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        import shutil
        shutil.rmtree(self.folder, ignore_errors=True)
        if conn is not None:
            _reply(conn, "stopped")
        os._exit(0)


def _receive(conn):
    import array
    import json

    fds = array.array("i")
    head, ancillary, _, _ = conn.recvmsg(4, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    if len(head) != 4:
        raise ValueError("short request")
    size = struct.unpack("!I", head)[0]
    body = b""
    while len(body) < size:
        got = conn.recv(size - len(body))
        if not got:
            raise ValueError("short request")
        body += got
    return json.loads(body.decode("utf-8")), list(fds)


def _reply(conn, line):
    try:
        conn.sendall((line + "\n").encode("utf-8"))
    except OSError:
        pass


def _main():
    folder, owner = sys.argv[1], int(sys.argv[2])
    os.chdir(folder)
    try:
        printed = _capture(folder, _import_torch)
    except BaseException as e:
        with open(os.path.join(folder, "broken"), "w") as f:
            f.write("the warm server could not import torch: %s: %s\n" % (type(e).__name__, e))
        os._exit(1)
    # The child's code, read now: the folder may be gone by the time a child runs.
    with open(os.path.join(_HERE, "warm_child.py"), "rb") as f:
        code = compile(f.read(), os.path.join(_HERE, "warm_child.py"), "exec", dont_inherit=True)
    server = Server(folder, owner)
    server.printed = printed
    job = server.serve()
    space = {"__name__": "sitepatch_warm_child", "__file__": os.path.join(_HERE, "warm_child.py")}
    exec(code, space)
    space["run"](job)


_main()
