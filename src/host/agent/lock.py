# agent/lock.py, a part of the sitepatch agent (start.py says how the parts are joined):
# the state folder's checks and the lock held as an open descriptor (lock, unlock).

LOCKS = {}  # path -> (open file descriptor holding the flock, whether a writer holds it)


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
