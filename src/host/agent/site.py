# agent/site.py, a part of the sitepatch agent (start.py says how the parts are joined):
# the environment's facts: its install paths and site folders, hello, and whether
# code compiles (compile) or a module can be found (importable) in this Python.

def install_paths():
    # sysconfig.get_paths() first loads the build's whole configuration (_sysconfigdata:
    # about 6 ms of every command's start); the paths of the default install scheme
    # expand from what sys says, as sysconfig expands them. A scheme naming anything else
    # gets sysconfig's own answer.
    try:
        scheme = getattr(sysconfig, "get_default_scheme", None) or sysconfig._get_default_scheme
        templates = sysconfig._INSTALL_SCHEMES[scheme()]
        flags = getattr(sys, "abiflags", "")
        names = {
            "base": sys.prefix, "platbase": sys.exec_prefix, "installed_base": sys.base_prefix,
            "installed_platbase": sys.base_exec_prefix,
            "py_version_short": "%d.%d" % sys.version_info[:2],
            "py_version_nodot": "%d%d" % sys.version_info[:2],
            "platlibdir": getattr(sys, "platlibdir", "lib"), "abiflags": flags,
            "implementation_lower": getattr(sysconfig, "_get_implementation", lambda: "Python")().lower(),
            "abi_thread": "t" if "t" in flags else "",
        }
        return dict((k, os.path.normpath(templates[k].format(**names)))
                    for k in ("purelib", "platlib", "stdlib", "platstdlib"))
    except Exception:
        return sysconfig.get_paths()


def isolated_user_site():
    # The agent runs with -I, which turns the user's site folder off; the programs it
    # patches for run without -I and keep it, unless site.py would have turned it off:
    # a venv that does not include the system's site-packages, or a setuid process.
    if os.getuid() != os.geteuid() or os.getgid() != os.getegid():
        return None
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        try:
            with open(os.path.join(sys.prefix, "pyvenv.cfg")) as f:
                cfg = dict((k.strip().lower(), v.strip().lower()) for k, v in
                           (line.split("=", 1) for line in f if "=" in line))
        except (OSError, ValueError):
            return None
        if cfg.get("include-system-site-packages") != "true":
            return None
    try:
        return site.getusersitepackages()
    except Exception:
        return None


def site_folders():
    # Where `import` looks for third-party code, in its order: sys.path without the
    # standard library, so a module resolves to the file Python would load. Folders a
    # .pth file added are told apart: they belong to whatever that file points at.
    paths = install_paths()
    listed = [paths.get("purelib"), paths.get("platlib")]
    listed += list(getattr(site, "getsitepackages", list)())  # old virtualenv's site lacks it
    user = getattr(site, "ENABLE_USER_SITE", False) and getattr(site, "USER_SITE", None)
    if not user and sys.flags.isolated:
        user = isolated_user_site()
    if user:
        listed.append(user)
    known = set(os.path.realpath(d) for d in listed if d)
    stdlib = [os.path.realpath(p) for p in (paths.get("stdlib"), paths.get("platstdlib")) if p]
    dirs, pth, seen = [], [], set()
    for d in list(sys.path) + [d for d in listed if d]:
        if not d or not os.path.isdir(d):
            continue
        real = os.path.realpath(d)  # lib64 -> lib is one folder, reported once
        if real in seen:
            continue
        in_stdlib = any(real == s or real.startswith(s + os.sep) for s in stdlib)
        if real not in known and in_stdlib:
            continue
        seen.add(real)
        dirs.append(d)
        if real not in known:
            pth.append(d)
    return dirs, pth


def stdlib_names():
    """The standard library's top-level modules: sys.stdlib_module_names from 3.10, else
    the builtin modules and what the stdlib folders hold."""
    names = set(getattr(sys, "stdlib_module_names", ()))
    if names:
        return sorted(names)
    names.update(sys.builtin_module_names)
    paths = sysconfig.get_paths()
    folders = [paths.get("stdlib"), paths.get("platstdlib")]
    folders += [os.path.join(f, "lib-dynload") for f in folders if f]
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except (OSError, TypeError):
            continue
        for e in entries:
            name = e.split(".")[0]
            if e.endswith((".py", ".so", ".pyd")) or (
                    "." not in e and e not in ("site-packages", "dist-packages", "__pycache__")):
                if name.isidentifier():
                    names.add(name)
    return sorted(names)


def _ext_suffixes():
    try:
        import _imp
        return list(_imp.extension_suffixes())
    except (ImportError, AttributeError):
        return []


def op_hello(req):
    global BEAT_SECONDS
    beat = req.get("beat")
    if isinstance(beat, (int, float)) and 0.05 <= beat <= 3600:
        BEAT_SECONDS = beat  # a quarter of the silence sitepatch waits for
    dirs, pth = site_folders()
    return {
        "protocol": PROTOCOL,
        "python": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "version": "%d.%d.%d" % sys.version_info[:3],
        "cache_tag": sys.implementation.cache_tag or "",
        # The suffixes of extension modules, in the order the import system tries them:
        # before source, so a compiled twin beside a .py is what `import` loads.
        "ext_suffixes": _ext_suffixes(),
        "site_dirs": dirs,
        "pth_dirs": pth,
        "dpkg": os.path.isdir("/var/lib/dpkg/info"),
        # What a name free in new code may still resolve to (plan warns about the rest).
        "builtins": sorted(dir(builtins)),
        # What a call out of the walked program may go into without being installed.
        "stdlib": stdlib_names(),
        "cpus": os.cpu_count() or 0,
        # Why the bootstrap (src/host/agent_boot.cpp) ran without its cache, if it did.
        "notes": list(globals().get("BOOT_NOTES", [])),
    }


def compile_one(f):
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(unb64(f["source_b64"]), f["label"], "exec", dont_inherit=True)
        return {"ok": True}
    except SyntaxError as e:
        # str(e) shows only the base name; say the whole label.
        where = ", line %d" % e.lineno if e.lineno else ""
        return {"ok": False, "line": e.lineno or 0, "column": e.offset or 0, "reason": e.msg,
                "message": "%s (%s%s)" % (e.msg, f["label"], where)}
    except Exception as e:  # ValueError (NUL bytes), RecursionError, MemoryError
        return {"ok": False, "line": 0, "message": "%s (%s)" % (str(e) or type(e).__name__, f["label"])}


def op_compile(req):
    files = req["files"]
    # compile() holds the GIL and runs at a few MB/s: a large batch is split over
    # forked copies of this process, one a core (no new interpreter starts).
    workers = min(os.cpu_count() or 1, 4, len(files) // 8)
    if workers < 2 or not hasattr(os, "fork"):
        return {"results": [compile_one(f) for f in files]}
    parts = [files[i::workers] for i in range(workers)]
    children = []
    for part in parts[1:]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                with os.fdopen(w, "w") as out:
                    out.write(dumps([compile_one(f) for f in part]))
            finally:
                os._exit(0)
        os.close(w)
        children.append((pid, r))
    done = [[compile_one(f) for f in parts[0]]]
    for pid, r in children:
        with os.fdopen(r) as inp:
            text = inp.read()
        os.waitpid(pid, 0)
        if not text:
            raise Refused("a compile worker died")
        done.append(loads(text))
    results = [None] * len(files)
    for i, part in enumerate(done):
        results[i::workers] = part
    return {"results": results}


def op_importable(req):
    # importlib.util.find_spec's search, without importing importlib.util (its imports
    # cost more than the search): top-level names only, since finding `a.b` would
    # import `a`, running its code.
    found = []
    for name in req["modules"]:
        hit = name in sys.modules
        for finder in sys.meta_path if not hit else ():
            try:
                hit = finder.find_spec(name, None) is not None
            except (ImportError, ValueError, AttributeError):
                hit = False
            if hit:
                break
        found.append(hit)
    return {"found": found}
