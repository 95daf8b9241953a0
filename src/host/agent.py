# sitepatch agent: run by the environment's own Python (3.8+, standard library only).
# It answers requests on stdin, one JSON object per line, with one JSON line each on
# stdout. Bytes travel base64-encoded. Every request gets a reply; EOF ends the agent.
# It is carried inside the sitepatch binary; src/host/agent_client.cpp speaks to it.
import sys

# Before anything newer is used: an old Python gets a clear refusal. This file keeps to
# syntax older Pythons still parse (no f-strings, no :=), so the check is reached.
if sys.version_info < (3, 8):
    sys.stderr.write("Python %d.%d.%d (%s) is too old for the sitepatch agent: it needs 3.8 or newer\n"
                     % (sys.version_info[0], sys.version_info[1], sys.version_info[2], sys.executable))
    sys.exit(96)

# `-c` puts the current folder first on sys.path: a json.py there must not replace ours.
sys.path[:] = [p for p in sys.path if p not in ("", ".")]

import binascii, builtins, errno, os, site, stat, sysconfig, time

# Every remote command waits for this start, so it imports only what is already loaded
# or cheap: `json`, `base64`, `fnmatch` and `hashlib` are not used, because `re` (with
# `enum`) and OpenSSL took about 20 ms of it. JSON goes through the C accelerator `json`
# itself uses, base64 through binascii, sha256 through the builtin module; each falls
# back to the full module where the fast one is missing.

try:
    import fcntl
except ImportError:  # not POSIX: lock is unavailable
    fcntl = None

PROTOCOL = 5
LOCKS = {}  # path -> (open file descriptor holding the flock, whether a writer holds it)


def b64(data):
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def unb64(text):
    return binascii.a2b_base64(text)


class _JsonContext(object):
    # What json.decoder.JSONDecoder hands _json's scanner: the defaults of json.loads.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity, as json.loads reads them


def _not_json(o):
    raise TypeError("%s is not JSON serializable" % type(o).__name__)


try:
    import _json

    _scan = _json.make_scanner(_JsonContext())
    # The arguments json.JSONEncoder passes for json.dumps(o, separators=(",", ":"),
    # check_circular=False): replies are trees.
    _encode = _json.make_encoder(None, _not_json, _json.encode_basestring_ascii, None, ":", ",",
                                 False, False, True)
except (ImportError, AttributeError, TypeError):
    _scan = _encode = None


def loads(text):
    if _scan is None:
        import json

        return json.loads(text)
    text = text.strip()
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not JSON: %r" % text[:80])
    if end != len(text):
        raise ValueError("extra data after JSON at column %d" % end)
    return value


def dumps(value):
    if _encode is None:
        import json

        return json.dumps(value, separators=(",", ":"))
    return "".join(_encode(value, 0))


_sha256_impl = []  # found on first use: a failed import searches sys.path every time


def sha256_hex(data):
    if not _sha256_impl:
        try:
            from _sha2 import sha256  # 3.12 and newer
        except ImportError:
            try:
                from _sha256 import sha256
            except ImportError:  # built without its own hashes (a FIPS build, say)
                from hashlib import sha256
        _sha256_impl.append(sha256)
    return _sha256_impl[0](data).hexdigest()


def glob_tokens(pattern):
    # fnmatch's language: * ? [seq] [!seq], a [ without its ] taken literally.
    toks, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            if not toks or toks[-1] != ("*",):
                toks.append(("*",))
        elif c == "?":
            toks.append(("?",))
        elif c == "[":
            j = i + 1 if i < n and pattern[i] == "!" else i
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                toks.append(("=", "["))
                continue
            body, i = pattern[i:j], j + 1
            negate = body.startswith("!")
            if negate:
                body = body[1:]
            ranges, k = [], 0
            while k < len(body):
                if k + 2 < len(body) and body[k + 1] == "-":
                    ranges.append((body[k], body[k + 2]))
                    k += 3
                else:
                    ranges.append((body[k], body[k]))
                    k += 1
            toks.append(("[", negate, ranges))
        else:
            toks.append(("=", c))
    return toks


def _one(tok, ch):
    if tok[0] == "?":
        return True
    if tok[0] == "=":
        return tok[1] == ch
    return any(lo <= ch <= hi for lo, hi in tok[2]) != tok[1]


def glob_match(name, toks):
    # Every token but * takes one character: a * is retried one character further
    # whenever what follows it fails.
    n = t = 0
    star, mark = -1, 0
    while n < len(name):
        if t < len(toks) and toks[t] != ("*",) and _one(toks[t], name[n]):
            n += 1
            t += 1
        elif t < len(toks) and toks[t] == ("*",):
            star, mark = t, n
            t += 1
        elif star >= 0:
            t, mark = star + 1, mark + 1
            n = mark
        else:
            return False
    while t < len(toks) and toks[t] == ("*",):
        t += 1
    return t == len(toks)


def oserr(e, path):
    return "%s: %s" % (path, e.strerror or e)


class Refused(Exception):
    pass


class Partial(Exception):
    def __init__(self, message, changed):
        Exception.__init__(self, message)
        self.changed = changed


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


def op_hello(req):
    dirs, pth = site_folders()
    return {
        "protocol": PROTOCOL,
        "python": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "version": "%d.%d.%d" % sys.version_info[:3],
        "cache_tag": sys.implementation.cache_tag or "",
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


MAX_FILE_BYTES = 64 << 20  # util::kMaxFileBytes


def _kind(mode):
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"


def read_bytes(path):
    # util::read_file: only a regular file, of at most MAX_FILE_BYTES; opening a FIFO
    # must not wait for a writer, and nothing is read before the type is known.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("%s: not a regular file (%s); sitepatch reads only regular files"
                          % (path, _kind(st.st_mode)))
        if st.st_size > MAX_FILE_BYTES:
            raise Refused("%s: %s" % (path, too_large(st.st_size)))
        chunks, total = [], 0
        while True:
            b = os.read(fd, max(st.st_size - total, 0) + 65536)
            if not b:
                break
            chunks.append(b)
            total += len(b)
            if total > MAX_FILE_BYTES:
                raise Refused("%s: %s" % (path, too_large(total)))
        return b"".join(chunks)
    finally:
        os.close(fd)


def too_large(n):
    mb = lambda b: "%d MB" % ((b + (1 << 20) - 1) >> 20)
    return "too large (%s; sitepatch reads files of at most %s)" % (mb(n), mb(MAX_FILE_BYTES))


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


def op_read(req):
    files = []
    for path in req["paths"]:
        item = {"path": path, "exists": False, "is_dir": False}
        try:
            st = os.stat(path)
        except FileNotFoundError:
            files.append(item)
            continue
        except NotADirectoryError:
            files.append(item)
            continue
        item.update(exists=True, mode=st.st_mode & 0o7777, nlink=st.st_nlink)
        if os.path.isdir(path):
            item["is_dir"] = True
        else:
            try:
                item["content_b64"] = b64(read_bytes(path))
            except OSError as e:
                raise Refused(oserr(e, path))
        files.append(item)
    return {"files": files}


def op_read_lines(req):
    # read, keeping only the lines that hold a needle: a long RECORD crosses the
    # connection as the rows asked for.
    needles = [n.encode() for n in req["needles"] if n]
    out = op_read({"paths": req["paths"]})
    for item in out["files"]:
        if "content_b64" not in item:
            continue
        text = unb64(item["content_b64"])
        keep = []
        for line in text.split(b"\n"):
            if line and any(n in line for n in needles):
                keep.append(line + b"\n")
        item["content_b64"] = b64(b"".join(keep))
    return {"files": out["files"]}


def op_stat(req):
    # Sizes and times only: which of a distribution's files changed is told without
    # sending them.
    files = []
    for path in req["paths"]:
        item = {"path": path, "exists": False}
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            files.append(item)
            continue
        except OSError as e:
            raise Refused(oserr(e, path))
        item.update(exists=True, is_file=stat.S_ISREG(st.st_mode), size=st.st_size, mtime_ns=st.st_mtime_ns)
        files.append(item)
    return {"files": files}


def op_list(req):
    d = req["dir"]
    try:
        names = sorted(os.listdir(d.encode()))
    except (FileNotFoundError, NotADirectoryError):
        return {"entries": []}
    entries = []
    for n in names:
        try:
            name = n.decode("utf-8")
        except UnicodeDecodeError:
            continue  # not a name a module or dist-info can have
        entries.append({"name": name, "is_dir": os.path.isdir(os.path.join(d, name))})
    return {"entries": entries}


def op_list_many(req):
    return {"lists": [op_list({"dir": d})["entries"] for d in req["dirs"]]}


def head_of(data):
    # Up to and with the first empty line: an email-style file's headers (METADATA).
    ends = [i + n for i, n in ((data.find(b"\n\n"), 2), (data.find(b"\n\r\n"), 3)) if i >= 0]
    return data[:min(ends)] if ends else data


def read_file(path):
    try:
        if os.path.isdir(path):
            return {"path": path, "exists": True, "is_dir": True}
        return {"path": path, "exists": True, "is_dir": False, "data": read_bytes(path)}
    except (FileNotFoundError, NotADirectoryError):
        return {"path": path, "exists": False, "is_dir": False}
    except OSError as e:
        raise Refused(oserr(e, path))


def sent(item):
    data = item.pop("data", None)
    if data is not None:
        item["content_b64"] = b64(data)
    return item


def op_search(req):
    # Host::search (host.hpp): which entries of folders hold a line with a needle, asked
    # here so that only the hits cross the connection, not every dist-info's RECORD.
    return {"answers": [search_one(q) for q in req["queries"]]}


def search_one(req):
    patterns = [glob_tokens(p.lower()) for p in req["patterns"]]
    lists, heads, wholes = req.get("lists", []), req.get("heads", []), req.get("wholes", [])
    needles = [n.encode() for n in req.get("needles", [])]
    every = any(not n for n in needles)
    hits = []
    for k, d in enumerate(req["dirs"]):
        for e in op_list({"dir": d})["entries"]:
            name = e["name"]
            if not any(glob_match(name.lower(), p) for p in patterns):
                continue
            base = os.path.join(d, name)
            found, hit = [], not needles
            for l in lists:
                path = os.path.join(base, l) if l else base
                if not needles:
                    found.append({"path": path, "exists": os.path.exists(path), "is_dir": False})
                    continue
                item = read_file(path)
                data = item.get("data")
                if data is not None and not every:
                    item["data"] = b"".join(line + b"\n" for line in data.split(b"\n")
                                           if line and any(n in line for n in needles))
                hit = hit or bool(item.get("data"))
                found.append(item)
            if not hit:
                continue
            got = [read_file(os.path.join(base, f) if f else base) for f in heads]
            for item in got:
                if item.get("data") is not None:
                    item["data"] = head_of(item["data"])
            hits.append({"dir": k, "name": name, "is_dir": e["is_dir"],
                         "lists": [sent(x) for x in found], "heads": [sent(x) for x in got],
                         "wholes": [sent(read_file(os.path.join(base, f) if f else base)) for f in wholes]})
    return hits


def unchanged(rel, path, have):
    # What the caller holds need not cross again. A git object or pack is named by its
    # content and never rewritten; anything else is compared by hash.
    want = have.get(rel)
    if want is None:
        return False
    if rel.startswith("objects/") and not rel.startswith("objects/info/"):
        return True
    return sha256_hex(read_bytes(path)) == want


def op_snapshot(req):
    # Every file under a folder (the history's repository), in one reply: what the
    # caller already has (`have`: rel -> sha256) only by name.
    root, skip, have = req["dir"], set(req.get("skip", [])), req.get("have", {})
    if not os.path.isdir(root):
        return {"exists": False, "files": []}
    files = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(folder, n)
            rel = os.path.relpath(path, root)
            if rel in skip or os.path.islink(path):
                continue
            try:
                if unchanged(rel, path, have):
                    files.append({"rel": rel, "same": True})
                    continue
                files.append({"rel": rel, "content_b64": b64(read_bytes(path))})
            except OSError as e:
                raise Refused(oserr(e, path))
    return {"exists": True, "files": files}


def op_realpath(req):
    return {"paths": [os.path.realpath(p) if os.path.exists(p) else None for p in req["paths"]]}


def _mode_text(m):
    return "%04o" % (m & 0o7777)


def _others_write(st):
    # The group's write bit counts unless the group is root's.
    return bool(st.st_mode & 0o002) or bool(st.st_mode & 0o020 and st.st_gid != 0)


def _write_problem(where, st):
    who = "other users" if st.st_mode & 0o002 else "its group %d" % st.st_gid
    return "%s is writable by %s (mode %s)" % (where, who, _mode_text(st.st_mode))


_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)  # a folder we may search but not list


def unsafe_path(path, create=False):
    # util::unsafe_path (src/util/safe_path.cpp), the same walk: why a user other than
    # this one (and root) could change where `path` leads, or None. `create` makes the
    # missing folders (0700) on the way, each judged once made.
    me = os.geteuid()
    trusted = (0, me)
    pending = [c for c in os.path.abspath(path).split("/") if c][::-1]
    seen = []
    dfd = os.open("/", _O_PATH | os.O_DIRECTORY)
    try:
        cur = os.fstat(dfd)
        if cur.st_uid not in trusted:
            return "/ belongs to uid %d, another user" % cur.st_uid
        links = 0
        while pending:
            name = pending.pop()
            where = "/" + "/".join(seen)
            if name == ".":
                continue
            if name == "..":
                if seen:
                    seen.pop()
                nfd = os.open("/" + "/".join(seen), _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
                os.close(dfd)
                dfd = nfd
                cur = os.fstat(dfd)
                continue
            if _others_write(cur) and not cur.st_mode & stat.S_ISVTX:
                return _write_problem(where, cur)
            here = (where.rstrip("/")) + "/" + name
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                if not create:
                    return None
                try:
                    os.mkdir(name, 0o700, dir_fd=dfd)
                except FileExistsError:
                    pass
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if st.st_uid not in trusted:
                return "%s belongs to uid %d, another user" % (here, st.st_uid)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > 40:
                    return "%s: too many levels of symbolic links" % here
                target = os.readlink(name, dir_fd=dfd)
                pending.extend([c for c in target.split("/") if c][::-1])
                if target.startswith("/"):
                    seen = []
                    nfd = os.open("/", _O_PATH | os.O_DIRECTORY)
                    os.close(dfd)
                    dfd = nfd
                    cur = os.fstat(dfd)
                continue
            if not stat.S_ISDIR(st.st_mode):
                return "%s is not a folder" % here if pending else None
            nfd = os.open(name, _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
            os.close(dfd)
            dfd = nfd
            cur = os.fstat(dfd)
            if (cur.st_ino, cur.st_dev) != (st.st_ino, st.st_dev):
                return "%s changed while it was checked" % here
            seen.append(name)
        if _others_write(cur):
            return _write_problem("/" + "/".join(seen), cur)
        return None
    except OSError as e:
        return oserr(e, path)
    finally:
        os.close(dfd)


def random_name():
    return binascii.hexlify(os.urandom(6)).decode("ascii")


def real_dir(dfd, folder):
    # The folder as the kernel opened it: a symlink swapped in after a check cannot
    # move a write elsewhere.
    try:
        return os.readlink("/proc/self/fd/%d" % dfd)
    except OSError:
        return os.path.realpath(folder)


def inside(path, root):
    return path == root or root == "/" or path.startswith(root.rstrip("/") + "/")


def outside_message(path, real, within):
    return ("refusing to write %s: its folder is %s, outside %s (a symbolic link leads out); "
            "nothing was written" % (path, real, within))


class Staged(object):
    def __init__(self, path, dfd, tmp, existed, original, mode, tag):
        self.path, self.dfd, self.tmp, self.tag = path, dfd, tmp, tag
        self.base = os.path.basename(path)
        self.existed, self.original, self.mode = existed, original, mode
        self.backup = None
        self.renamed = False


def unsafe_write_message(path, why):
    return ("refusing to write %s: %s, who could redirect the write; run sitepatch as that user "
            "or make the folder writable only by you; nothing was written" % (path, why))


def check_target(f):
    path = os.path.realpath(f["path"]) if os.path.islink(f["path"]) else f["path"]
    for folder in sorted(set([os.path.dirname(f["path"]), os.path.dirname(path)])):
        why = unsafe_path(folder or ".")
        if why:
            raise Refused(unsafe_write_message(f["path"], why))
    within = os.path.realpath(f["within"]) if f.get("within") else ""
    if os.path.isdir(path):
        raise Refused("%s is a folder; nothing was written" % f["path"])
    try:
        original = read_bytes(path)
        found = sha256_hex(original)
    except FileNotFoundError:
        original, found = None, ""
    except IsADirectoryError:
        raise Refused("%s is a folder; nothing was written" % f["path"])
    expected = f.get("expected_sha256", "")
    if found != expected:
        raise Refused("%s changed since it was read (expected sha256 %s, found %s); "
                      "nothing was written" % (f["path"], expected or "none (a new file)",
                                               found or "no file"))
    return path, within, original


def stage(f, path, within, original):
    try:
        st = os.stat(path)
        mode = st.st_mode & 0o7777
    except FileNotFoundError:
        st, mode = None, 0o644
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    folder, base = os.path.split(path)
    dfd = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        real = real_dir(dfd, folder or ".")
        if within and not inside(real, within):
            raise Refused(outside_message(f["path"], real, within))
        # O_EXCL|O_NOFOLLOW at a random name: a planted link is refused, and nobody can
        # plant at a name they cannot guess.
        for attempt in range(9):
            tmp = ".%s.sitepatch-%s%s.tmp" % (base, f.get("tag", ""), random_name())
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                             dir_fd=dfd)
                break
            except FileExistsError:
                if attempt == 8:
                    raise
        try:
            os.fchmod(fd, mode)
            if st is not None and os.geteuid() == 0:
                os.fchown(fd, st.st_uid, st.st_gid)
            data = memoryview(unb64(f["content_b64"]))
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(tmp, dir_fd=dfd)
            raise
        os.close(fd)
    except BaseException:
        os.close(dfd)
        raise
    return Staged(path, dfd, tmp, st is not None, original, mode, f.get("tag", ""))


def put_back(staged):
    stuck = []
    for s in reversed(staged):
        if not s.renamed:
            continue
        try:
            if s.backup:
                os.replace(s.backup, s.base, src_dir_fd=s.dfd, dst_dir_fd=s.dfd)
            elif not s.existed:
                os.unlink(s.base, dir_fd=s.dfd)
            else:  # no link could be made: the original bytes are rewritten
                tmp = ".%s.sitepatch-%s%s.tmp" % (s.base, s.tag, random_name())
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                             dir_fd=s.dfd)
                try:
                    os.fchmod(fd, s.mode)
                    os.write(fd, s.original)
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.replace(tmp, s.base, src_dir_fd=s.dfd, dst_dir_fd=s.dfd)
            s.renamed, s.backup = False, None
        except OSError:
            stuck.append(s.path)
    return stuck


def op_write(req):
    # All or nothing. 1. Compare first, for every file; write nothing when one changed.
    files = req["files"]
    tag = req.get("tag", "")  # Lock in host.hpp: the writer's tag begins every temp's name
    if not (len(tag) == 8 and tag.isalnum()):
        tag = ""
    for f in files:
        f["tag"] = tag
    checked = [check_target(f) for f in files]
    # 2. Each file to a private temp beside it, fsync'd (on threads: fsync releases the
    #    GIL). A failure here leaves every file as it was.
    staged = [None] * len(files)

    def do_stage(i):
        path, within, original = checked[i]
        try:
            staged[i] = stage(files[i], path, within, original)
        except OSError as e:
            raise Refused(oserr(e, files[i]["path"]) + "; nothing was written")

    try:
        if len(files) > 4:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(max_workers=8) as pool:
                for _ in pool.map(do_stage, range(len(files))):
                    pass
        else:
            for i in range(len(files)):
                do_stage(i)
        # 3. Renames in request order (a new inode: hard links to the old one keep the
        #    old bytes), each original kept as a link until all are made, so a failed
        #    rename puts the earlier ones back without needing disk space.
        for i, s in enumerate(staged):
            if s.existed:
                for _ in range(8):
                    name = ".%s.sitepatch-%s%s.orig" % (s.base, s.tag, random_name())
                    try:
                        os.link(s.base, name, src_dir_fd=s.dfd, dst_dir_fd=s.dfd,
                                follow_symlinks=False)
                        s.backup = name
                        break
                    except FileExistsError:
                        continue
                    except OSError:
                        break
            try:
                os.replace(s.tmp, s.base, src_dir_fd=s.dfd, dst_dir_fd=s.dfd)
                s.renamed, s.tmp = True, None
            except OSError as e:
                stuck = put_back(staged[:i])
                msg = "%s: cannot replace: %s" % (files[i]["path"], e.strerror or e)
                if stuck:
                    msg += "\nthe files written before it could not all be put back:"
                    for p in stuck:
                        msg += "\n  %s: has the new bytes" % p
                    raise Partial(msg, stuck)
                msg += "; nothing was written"
                if i:
                    msg += " (the %d file(s) replaced before it were put back)" % i
                raise Refused(msg)
        for s in staged:
            if s.backup:
                try:
                    os.unlink(s.backup, dir_fd=s.dfd)
                except OSError:
                    pass
        synced = set()  # a folder holding several of the files is fsync'd once
        for s in staged:
            folder = os.path.dirname(s.path)
            if folder in synced:
                continue
            synced.add(folder)
            try:
                os.fsync(s.dfd)
            except OSError:
                pass
    finally:
        for s in staged:
            if s is None:
                continue
            if s.tmp:
                try:
                    os.unlink(s.tmp, dir_fd=s.dfd)
                except OSError:
                    pass
            os.close(s.dfd)
    return {}


def op_remove(req):
    for path in req["paths"]:
        why = unsafe_path(os.path.dirname(path) or ".")
        if why:
            raise Refused("refusing to remove %s: %s, who could redirect it; nothing was removed"
                          % (path, why))
    for path in req["paths"]:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise Refused(oserr(e, path))
    return {}


def unsafe_state_message(folder, why):
    return ("refusing to keep the history in %s: %s, who could redirect what sitepatch writes "
            "there; give --state-dir a folder only you can write, or run sitepatch as that user"
            % (folder, why))


def check_state_folder(folder, shared):
    # The lock's folder holds the history: a real folder, and for a writer one it owns
    # that nobody else may write to, since the history's files are created there. Every
    # folder above it too: whoever can rename one can swap the whole history for a link.
    why = unsafe_path(folder)
    if why:
        raise Refused(unsafe_state_message(folder, why))
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        if shared:
            return False
        os.makedirs(os.path.dirname(folder) or ".", exist_ok=True)
        try:
            os.mkdir(folder, 0o755)
        except FileExistsError:
            pass
        why = unsafe_path(folder)
        if why:
            raise Refused(unsafe_state_message(folder, why))
        st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode):
        raise Refused("%s is a symbolic link (to %s); sitepatch keeps its history and lock only "
                      "in a real folder: remove the link (or give --state-dir)"
                      % (folder, os.readlink(folder)))
    if not stat.S_ISDIR(st.st_mode):
        raise Refused("%s is not a folder; sitepatch keeps its history there: move it away" % folder)
    if not shared:
        me = os.geteuid()
        if st.st_uid != me:
            raise Refused("%s belongs to uid %d, not to you (uid %d): files it creates there could "
                          "be redirected by that user; run sitepatch as its owner, or take it over "
                          "(chown -R %d %s)" % (folder, st.st_uid, me, me, folder))
        if st.st_mode & 0o022:
            raise Refused("%s is writable by other users (mode %03o): files sitepatch creates there "
                          "could be redirected; chmod go-w %s" % (folder, st.st_mode & 0o777, folder))
    return True


def op_lock(req):
    path, timeout = req["path"], req.get("timeout_ms", 0) / 1000.0
    shared = bool(req.get("shared", False))
    if fcntl is None:
        raise Refused("locking is not supported on this system")
    if path in LOCKS:
        raise Refused("%s: already locked by this agent" % path)
    if not check_state_folder(os.path.dirname(path) or ".", shared):
        return {"none": True}
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise Refused("%s is a symbolic link (to %s); sitepatch never opens its lock through "
                          "a link: remove it" % (path, os.readlink(path)))
        if not shared:
            raise Refused("cannot create lock " + oserr(e, path))
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return {"none": True}
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        raise Refused("%s is not a lock file sitepatch made (%s); remove it"
                      % (path, "it has other hard links" if stat.S_ISREG(st.st_mode)
                         else "not a regular file"))
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise Refused("another sitepatch is working on this environment "
                              "(lock %s held); try again later" % path)
            time.sleep(0.02)
    earlier = []
    if not shared:
        # lock_text in src/host/lock_tags.cpp: "<pid> <tag>", then the tags of writers
        # that never released it; the caller removes only temps bearing one of those.
        earlier = lock_tags(os.pread(fd, 4096, 0))
        tag = req.get("tag", "")
        os.ftruncate(fd, 0)
        os.pwrite(fd, ("%d %s\n" % (os.getpid(), tag) + "".join(t + "\n" for t in earlier)).encode(), 0)
    LOCKS[path] = (fd, not shared)
    return {"earlier": earlier}


def lock_tags(data):
    out = []
    for i, line in enumerate(data.decode("ascii", "replace").split("\n")):
        words = line.split()
        w = (words[1] if len(words) > 1 else "") if i == 0 else (words[0] if words else "")
        if len(w) == 8 and all(c in "abcdefghijklmnopqrstuvwxyz0123456789" for c in w) and len(out) < 32:
            out.append(w)
    return out


def release(fd, writer):
    # Released, not killed: this agent's temps are gone (op_write's finally), so the
    # lock need no longer name them.
    try:
        if writer:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def op_unlock(req):
    held = LOCKS.pop(req["path"], None)
    if held is not None:
        release(*held)
    return {}


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


def op_run(req):
    # A user's command (try, apply --check, explain --run) with files of its own in a
    # private folder (mkdtemp: 0700, a name nobody chose), removed after it; its output
    # comes back whole in the reply.
    import shutil
    import subprocess
    import tempfile

    reclaim_run_folders(tempfile.gettempdir())
    folder = tempfile.mkdtemp(prefix="sitepatch-run-%d-" % os.getpid())
    why = unsafe_path(folder)
    if why:
        # Its sitecustomize runs in every Python the command starts: a folder another
        # user could swap would be theirs to choose.
        os.rmdir(folder)
        raise Refused("refusing to run the command with its files in %s: %s; set TMPDIR to a folder only you can "
                      "change" % (os.path.dirname(folder), why))
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


OPS = {
    "hello": op_hello, "compile": op_compile, "read": op_read, "read_lines": op_read_lines, "search": op_search, "list": op_list, "stat": op_stat,
    "realpath": op_realpath, "write": op_write, "remove": op_remove,
    "lock": op_lock, "unlock": op_unlock, "list_many": op_list_many, "snapshot": op_snapshot,
    "importable": op_importable, "run": op_run, "run_many": op_run_many,
}


def main():
    # Replies go to a private copy of stdout; anything else printed (a .pth file, a
    # warning, a C library) lands on stderr instead of corrupting the protocol.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            req = loads(line.decode("utf-8"))
            fn = OPS.get(req.get("op")) if isinstance(req, dict) else None
            if fn is None:
                raise Refused("unknown op %r" % (req.get("op") if isinstance(req, dict) else req,))
            reply = fn(req)
            reply["ok"] = True
        except Refused as e:
            reply = {"ok": False, "error": str(e)}
        except Partial as e:
            reply = {"ok": False, "error": str(e), "partial": e.changed}
        except Exception as e:
            reply = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        out.write(dumps(reply).encode("ascii") + b"\n")
        out.flush()
    # EOF: the caller is done, or gone; either way no request of ours is half done.
    for fd, writer in list(LOCKS.values()):
        release(fd, writer)
    LOCKS.clear()
    return 0


def run():
    code = main()
    # Every reply is flushed and the OS releases the locks: skip the interpreter's
    # tear-down, which every command would otherwise wait for.
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # `python -c <source>`; src/host/agent_boot.cpp imports it and calls run()
    run()
