# agent/files.py, a part of the sitepatch agent (start.py says how the parts are joined):
# reading: files (only regular ones, of bounded size), their stats, folders'
# entries, searches of dist-info folders, a whole history's snapshot, real paths.

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
