# agent/run.py, a part of the sitepatch agent (start.py says how the parts are joined):
# a user's command with files of its own in a private folder (run), several at once
# (run_many), and the folders killed runs left.

def reclaim_run_folders(root):
    # What an agent killed during a run left (util::make_temp_folder's rule): our own
    # private folders named after a process that is gone; never a link or another's.
    import shutil
    if unsafe_path(root):
        return  # another user could rename what we remove under us
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) < 4 or parts[0] != "sitepatch" or parts[1] != "run" or not parts[2].isdigit():
            continue
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                continue
            os.kill(int(parts[2]), 0)
            continue  # its maker still runs
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def run_root():
    # util::make_run_folder's rule: the folder a command's environment names (PYTHONPATH)
    # lies in this user's cache, in a folder only this user can change, so that nobody
    # else can make it again once it is removed (a process the command left behind still
    # imports from it); in /tmp anyone could.
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = os.path.join(os.path.abspath(base), "sitepatch", "run")
    why = unsafe_path(root, create=True)
    if why:
        raise Refused("refusing to run the command with its files in %s: %s; set XDG_CACHE_HOME to a folder only you "
                      "can change" % (root, why))
    return root


def op_run(req):
    # A user's command (try, apply --check, explain --run) with files of its own in a
    # private folder (mkdtemp: 0700, a name nobody chose), removed after it; its output
    # comes back whole in the reply.
    import shutil
    import subprocess
    import tempfile

    root = run_root()
    reclaim_run_folders(root)
    folder = tempfile.mkdtemp(prefix="sitepatch-run-%d-" % os.getpid(), dir=root)
    try:
        for name, content in req.get("files", {}).items():
            if not name or "/" in name or name.startswith("."):
                raise Refused("run: file name %r" % (name,))
            fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(content.encode("utf-8"))
        env = dict(os.environ)
        for key, value in req.get("env", {}).items():
            env[key] = value.replace("{dir}", folder)

        def first(key, path):
            env[key] = path + (":" + env[key] if env.get(key) else "")

        for key in req.get("path_first", []):
            first(key, folder)
        for key, path in req.get("path_first_dirs", {}).items():
            first(key, path)
        argv = req["argv"]
        import time
        start = time.time()
        try:
            p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise Refused("cannot run %s: %s" % (argv[0], e.strerror))
        out, err = p.communicate()
        status = p.returncode if p.returncode >= 0 else 128 - p.returncode
        return {"status": status, "out": out.decode("utf-8", "replace"), "err": err.decode("utf-8", "replace"),
                "seconds": time.time() - start}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def op_run_many(req):
    # explain --run's candidates at once: each run as op_run, `jobs` threads taking the
    # next; the results in order. A refusal of any is the reply's.
    import threading

    runs = req.get("runs", [])
    results = [None] * len(runs)
    errors = []
    lock = threading.Lock()
    todo = list(range(len(runs)))

    def work():
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop(0)
            try:
                results[i] = op_run(runs[i])
            except Exception as e:
                with lock:
                    errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(max(1, min(int(req.get("jobs", 1)), len(runs))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return {"results": results}
