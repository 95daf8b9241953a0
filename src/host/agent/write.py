# agent/write.py, a part of the sitepatch agent (start.py says how the parts are joined):
# changing files: unsafe_path (who else could redirect a path), staging each file
# to a temp beside it, the all-or-nothing write, and remove.

def _mode_text(m):
    return "%04o" % (m & 0o7777)


def _others_write(st):
    # The group's write bit counts unless the group is root's.
    return bool(st.st_mode & 0o002) or bool(st.st_mode & 0o020 and st.st_gid != 0)


def _write_problem(where, st):
    who = "other users" if st.st_mode & 0o002 else "its group %d" % st.st_gid
    return "%s is writable by %s (mode %s)" % (where, who, _mode_text(st.st_mode))


def _acl_writer(where, attribute, st):
    # util::safe_path.cpp's twin: who a POSIX ACL (the kernel's xattr form: a version
    # word, then tag, permission, id entries) lets write besides root, us and a root
    # group; entries the mask takes write from do not count.
    try:
        data = os.getxattr(where, attribute, follow_symlinks=False)
    except (OSError, AttributeError):
        return ""
    entries = [(int.from_bytes(data[i:i + 2], "little"), int.from_bytes(data[i + 2:i + 4], "little"),
                int.from_bytes(data[i + 4:i + 8], "little")) for i in range(4, len(data) - 7, 8)]
    if any(tag == 0x10 and not perm & 2 for tag, perm, _ in entries):
        return ""
    for tag, perm, ident in entries:
        if not perm & 2:
            continue
        if tag == 0x02 and ident not in (0, os.geteuid()):
            return "uid %d" % ident
        if tag == 0x08 and ident != 0:
            return "group %d" % ident
        if tag == 0x04 and st.st_gid != 0:
            return "group %d" % st.st_gid
    return ""


def _writable_by_others(where, st, makes_in):
    # Its mode, or an ACL: the access one, and for the folder things are made in, the
    # default one what is made there inherits.
    if _others_write(st):
        return _write_problem(where, st)
    if st.st_mode & 0o020:  # with an access ACL the group bits are its mask
        who = _acl_writer(where, "system.posix_acl_access", st)
        if who:
            return "%s is writable by %s through a POSIX ACL (see getfacl %s)" % (where, who, where)
    if makes_in and stat.S_ISDIR(st.st_mode):
        who = _acl_writer(where, "system.posix_acl_default", st)
        if who:
            return "%s lets %s write what is made in it, through a default POSIX ACL (see getfacl %s)" % (
                where, who, where)
    return None


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
            if not cur.st_mode & stat.S_ISVTX:
                why = _writable_by_others(where, cur, False)
                if why:
                    return why
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
                # The last name a file: whoever may write it chooses what it says.
                return "%s is not a folder" % here if pending else _writable_by_others(here, st, False)
            nfd = os.open(name, _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
            os.close(dfd)
            dfd = nfd
            cur = os.fstat(dfd)
            if (cur.st_ino, cur.st_dev) != (st.st_ino, st.st_dev):
                return "%s changed while it was checked" % here
            seen.append(name)
        return _writable_by_others("/" + "/".join(seen), cur, True)
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
