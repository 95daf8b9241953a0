# explain --run's warm runs, the client: what a run starts instead of `python SCRIPT ...`.
# It hands the run to the session's fork server (warm_server.py: one Python that imported
# torch once), starting it on first use, and exits as the run's process does. Whatever
# the server cannot run as a fresh interpreter would, runs cold: this process becomes
# the real command (exec), with the same pid, descriptors and environment.
#
# Started as `PYTHON -E -S -c BOOT PYTHON SCRIPT ARGS` (or `PYTHON -m MODULE ARGS`), the
# command's own interpreter word first so that PATH finds the same Python; its file is
# SITEPATCH_WARM_CLIENT, in the run's private folder beside the try hook. `--stop`
# instead of a command ends the session's server. Its first line on stderr says how the
# run started ("sitepatch-run: warm", or "sitepatch-run: cold: WHY"); sitepatch takes
# that line out before reading the log. Python 3.6 and later.
import os
import signal
import socket
import struct
import sys
import time

_MARK = "sitepatch-run: "
_START_WAIT = 300  # seconds a first import of torch may take on a loaded machine


class _Cold(Exception):
    pass


def _say(text):
    os.write(2, (_MARK + text + "\n").encode("utf-8", "replace"))


def _cold(argv, why):
    # The command as sh would have run it: found on PATH, this process its process.
    _say("cold: " + why)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        os.write(2, ("sitepatch: cannot run %s: %s\n" % (argv[0], e.strerror)).encode())
        os._exit(127)


def _session_folder():
    # Beside this run's private folder, in the same folder only this user can change
    # (sitepatch made it so); named by the explain session.
    token = os.environ.get("SITEPATCH_WARM_SESSION", "")
    if not token or not all(c in "0123456789abcdefghijklmnopqrstuvwxyz" for c in token):
        raise _Cold("no warm session named")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = os.path.join(root, "sitepatch-warm-" + token)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(folder)
    if not (st.st_mode & 0o170000 == 0o040000) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise _Cold("%s is not a private folder of this user" % folder)
    return folder


def _connect(folder):
    # The socket by its name inside the folder (a path to it may pass the 108 bytes a
    # socket address holds): into the folder and back, by descriptor.
    here = os.open(".", os.O_RDONLY)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.chdir(folder)
        s.connect("sock")
        return s
    except OSError:
        s.close()
        return None
    finally:
        os.fchdir(here)
        os.close(here)


def _server_env():
    # The runs' environment less what is the run's own: the manifest, this client, and
    # the run's folder at the head of PYTHONPATH.
    env = dict(os.environ)
    mine = os.path.dirname(os.path.abspath(__file__))
    parts = env.get("PYTHONPATH", "").split(os.pathsep)
    if parts and parts[0] == mine:
        parts = parts[1:]
    if parts and parts != [""]:
        env["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        env.pop("PYTHONPATH", None)
    for key in ("SITEPATCH_TRY", "SITEPATCH_WARM_CLIENT"):
        env.pop(key, None)
    return env


def _start(folder):
    # One client starts the server (a lock in the folder); the others wait for its socket.
    import fcntl
    import subprocess

    lock = os.open(os.path.join(folder, "start.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        s = _connect(folder)
        if s is not None:
            return s
        broken = os.path.join(folder, "broken")
        if os.path.exists(broken):
            with open(broken) as f:
                raise _Cold(f.read().strip())
        mine = os.path.dirname(os.path.abspath(__file__))
        for name in ("warm_server.py", "warm_child.py"):
            with open(os.path.join(mine, name), "rb") as src:
                data = src.read()
            path = os.path.join(folder, name)
            fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.rename(path + ".tmp", path)
        # Its own session: the kill of a run's process group is not for it. Its owner is
        # what started this run (sitepatch, or its agent): gone, the server ends.
        p = subprocess.Popen([sys.executable, os.path.join(folder, "warm_server.py"), folder, str(os.getppid())],
                             env=_server_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        deadline = time.time() + _START_WAIT
        while time.time() < deadline:
            s = _connect(folder)
            if s is not None:
                return s
            if os.path.exists(broken):
                with open(broken) as f:
                    raise _Cold(f.read().strip())
            if p.poll() is not None:
                raise _Cold("the warm server ended at its start (status %d)" % p.returncode)
            time.sleep(0.05)
        raise _Cold("the warm server did not start within %d s" % _START_WAIT)
    finally:
        os.close(lock)


def _check(argv):
    # What must hold before a server may run it; the server checks the rest.
    if os.path.realpath(os.path.dirname(sys.executable)) != os.path.realpath(
            os.path.join(os.environ.get("VIRTUAL_ENV", "/nonexistent"), "bin")):
        return "%s is not the environment's Python" % argv[0]
    # What changes how Python runs the program itself, or what it prints of its imports.
    for var in ("PYTHONINSPECT", "PYTHONPROFILEIMPORTTIME", "PYTHONVERBOSE"):
        if os.environ.get(var):
            return "%s is set" % var
    for part in _server_env().get("PYTHONPATH", "").split(os.pathsep):
        if part and not os.path.isabs(part):
            return "PYTHONPATH holds a relative folder (%s)" % part
    if argv[1] != "-m" and not os.path.isfile(argv[1]):
        return "%s is not a file" % argv[1]
    return None


def _send(s, request, fds):
    import array
    import json

    body = json.dumps(request).encode("utf-8")
    s.sendmsg([struct.pack("!I", len(body))], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    s.sendall(body)


def _lines(s):
    buf = b""
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line.decode("utf-8", "replace")
        try:
            got = s.recv(4096)
        except InterruptedError:
            continue
        if not got:
            return
        buf += got


def _forward(pid):
    # A signal for this run is for its process: its group gets it.
    def handler(sig, frame):
        try:
            os.killpg(pid, sig)
        except OSError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, handler)


def _end_as(status):
    # Exit as the run's process did: its code, or its signal.
    if status.startswith("signal "):
        sig = int(status.split()[1])
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        time.sleep(1)
        os._exit(128 + sig)
    os._exit(int(status.split()[1]))


def _stop():
    try:
        folder = _session_folder()
    except (_Cold, OSError):
        return 0
    s = _connect(folder)
    if s is not None:
        _send(s, {"stop": True}, [0])
        for _ in _lines(s):
            pass
    # The server also ends when its folder is gone.
    import shutil
    shutil.rmtree(folder, ignore_errors=True)
    return 0


def main():
    argv = sys.argv[1:]
    if argv == ["--stop"]:
        os._exit(_stop())
    if len(argv) < 2:
        _cold(argv or ["python"], "not `python SCRIPT` or `python -m MODULE`")
    try:
        why = _check(argv)
        if why:
            raise _Cold(why)
        folder = _session_folder()
        s = _connect(folder) or _start(folder)
        request = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "executable": sys.executable,
                   "folder": os.path.dirname(os.path.abspath(__file__))}
        _send(s, request, [0, 1, 2])
    except _Cold as e:
        _cold(argv, str(e))
    except Exception as e:  # noqa: BLE001 -- whatever the warm way lacks, the cold one runs
        _cold(argv, "the warm server: %s: %s" % (type(e).__name__, e))
    for line in _lines(s):
        if line.startswith("cold "):
            _cold(argv, line[5:])
        elif line.startswith("pid "):
            _forward(int(line[4:]))
        elif line.startswith("exit ") or line.startswith("signal "):
            _end_as(line)
    os.write(2, b"sitepatch: the warm server ended before the run did\n")
    os._exit(255)


main()
