# explain --run's warm runs, the child: what a process forked from the warm server
# (warm_server.py) does to become the run, as a fresh `python SCRIPT ARGS` or `python -m
# MODULE ARGS` would have been: the client's descriptors as 0, 1 and 2, its environment
# and working folder, the run's try hook (its sitecustomize, in its run folder) executed
# as site would, then the program as __main__, its exit (code, traceback, threads, atexit,
# flushed streams) the interpreter's, less the teardown of every module after it. Where
# the server already imported a module the run patches, the child execs the real command
# instead: cold, in the same process. Python 3.6 and later.
import os
import signal
import sys

_MARK = "sitepatch-run: "


def _say(text):
    os.write(2, (_MARK + text + "\n").encode("utf-8", "replace"))


def _cold(argv, env, why):
    _say("cold: " + why)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        os.write(2, ("sitepatch: cannot run %s: %s\n" % (argv[0], e.strerror)).encode())
        os._exit(127)


def _patched_names(manifest):
    # The modules try_hook.py's manifest patches (its format: a header line, then per
    # file its path, module, sha256 and byte count on a line each, then the bytes).
    names = set()
    if not manifest:
        return names
    try:
        with open(manifest, "rb") as f:
            data = f.read()
    except OSError:
        return names
    pos = data.find(b"\n") + 1
    while 0 < pos < len(data):
        fields = []
        for _ in range(4):
            end = data.index(b"\n", pos)
            fields.append(data[pos:end])
            pos = end + 1
        names.add(fields[1].decode("utf-8"))
        pos += int(fields[3])
    return names


def _why_cold(argv, env):
    loaded = sorted(n for n in _patched_names(env.get("SITEPATCH_TRY")) if n in sys.modules)
    if loaded:
        return "the warm server had imported %s, which this run patches" % ", ".join(loaded)
    if argv[1] != "-m":
        with open(argv[1], "rb") as f:
            if f.read(2) == b"PK" or argv[1].endswith(".pyc"):
                return "%s is a zip or bytecode file" % argv[1]
    return None


def _report_imports(folder, skip):
    # At exit (registered first, so it runs last): the modules this run imported, for
    # the server to import before the next one.
    import atexit
    before = set(sys.modules)

    def report():
        names = [n for n in list(sys.modules) if n not in before and n not in skip and n != "__main__"]
        try:
            fd = os.open(os.path.join(folder, "learned.%d" % os.getpid()), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write("\n".join(names))
        except OSError:
            pass

    atexit.register(report)


def _run_hook(path):
    # As site runs a sitecustomize; SITEPATCH_WARM_CHILD tells the hook that the
    # environment's own sitecustomize already ran (in the server), only while it runs.
    import types
    module = types.ModuleType("sitecustomize")
    module.__file__ = path
    os.environ["SITEPATCH_WARM_CHILD"] = "1"
    try:
        with open(path, "rb") as f:
            exec(compile(f.read(), path, "exec", dont_inherit=True), module.__dict__)
    except Exception as err:
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                             % (err.__class__.__name__, err))
    finally:
        os.environ.pop("SITEPATCH_WARM_CHILD", None)
    sys.modules.setdefault("sitecustomize", module)


def _ours(tb):
    # The frames of the server and this child: a cold run's traceback has none of them.
    mine = (os.path.abspath(__file__), os.path.join(os.path.dirname(os.path.abspath(__file__)), "warm_server.py"))
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) in mine:
        tb = tb.tb_next
    return tb


def _finish(code):
    # As the interpreter ends (non-daemon threads joined, exit functions run, the
    # standard streams flushed), without the teardown of every module that follows:
    # a second of a torch process's exit, and nothing a run shows.
    import atexit
    import threading
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception as e:  # noqa: BLE001 -- Python's own words, and its status
            sys.stderr.write("Exception ignored in: %r\n%s: %s\n" % (stream, type(e).__name__, e))
            code = 120
    os._exit(code)


def _exit_code(e):
    # What the interpreter does with a SystemExit that reaches it.
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    try:
        sys.stderr.write("%s\n" % (e.code,))
    except Exception:  # noqa: BLE001
        pass
    return 1


def _execute(program):
    try:
        program()
    except SystemExit as e:
        _finish(_exit_code(e))
    except BaseException as e:
        tb = _ours(e.__traceback__)
        e.__traceback__ = tb
        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, tb
        sys.excepthook(type(e), e, tb)
        if isinstance(e, KeyboardInterrupt):
            # A fresh interpreter ends by the signal, after its exit functions.
            import atexit
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        _finish(1)
    _finish(0)


def _script(script):
    import builtins
    import importlib.machinery
    import types

    # 3.9 and later name the main script by its absolute path; its folder (links
    # resolved) leads sys.path.
    path = os.path.abspath(script) if sys.version_info >= (3, 9) else script
    sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__cached__ = None
    main.__builtins__ = builtins
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    sys.modules["__main__"] = main

    def program():
        with open(script, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
        exec(code, main.__dict__)

    _execute(program)


def _module(name):
    import runpy

    sys.path.insert(0, os.getcwd())
    _execute(lambda: runpy._run_module_as_main(name))


def run(job):
    request, fds, printed = job["request"], job["fds"], job["printed"]
    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    argv, env = request["argv"], request["env"]
    os.environ.clear()
    os.environ.update(env)
    os.chdir(request["cwd"])
    why = _why_cold(argv, env)
    if why:
        _cold(argv, env, why)
    _say("warm")
    _report_imports(job["folder"], _patched_names(env.get("SITEPATCH_TRY")))
    for key, value in job["env_changes"].items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    # What importing torch printed (a warning), where the run's own import would have.
    if printed[0]:
        os.write(1, printed[0])
    if printed[1]:
        os.write(2, printed[1])
    if os.isatty(1) and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    if hasattr(sys, "orig_argv"):
        sys.orig_argv = list(argv)
    sys.argv = ["-m"] + argv[3:] if argv[1] == "-m" else argv[1:]
    sys.path.insert(0, request["folder"])
    hook = os.path.join(request["folder"], "sitecustomize.py")
    if os.path.isfile(hook):
        _run_hook(hook)
    if argv[1] == "-m":
        _module(argv[2])
    else:
        _script(argv[1])
