#include "host/agent_boot.hpp"

#include "sitepatch_agent_source.hpp"

namespace sitepatch::host {
namespace {

// Python 3 of any age must get as far as the agent's own version check, so no newer
// syntax here. The agent's compiled code is kept in a per-user cache so Python need not
// compile it at every start. Another user who can write any folder on the way to that
// cache could swap what is loaded, so the walk to it goes folder by folder through
// descriptors (no link followed), each folder the running user's or root's and written
// by nobody else (a sticky folder only above one of theirs); what is loaded is the bytes
// read through the last descriptor, compiled or unmarshalled in memory, never a path
// imported. Anything unusual runs the sent source, and says why in hello's `notes`.
const char kBoot[] = R"PY(import os, sys
def _sitepatch_dir(base, parts):
    me = os.geteuid()
    O = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY
    names = [c for c in base.split("/") if c] + parts
    fd, where = os.open("/", O), ""
    try:
        cur = os.fstat(fd)
        for name in names:
            if name in (".", ".."):
                raise OSError("%s in %s" % (name, base))
            if (cur.st_mode & 2 or cur.st_mode & 16 and cur.st_gid) and not cur.st_mode & 512:
                raise OSError("%s is writable by other users (mode %04o)" % (where or "/", cur.st_mode & 4095))
            where += "/" + name
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                os.mkdir(name, 448, dir_fd=fd)
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if st.st_uid not in (0, me):
                raise OSError("%s belongs to uid %d, another user" % (where, st.st_uid))
            if (st.st_mode & 61440) == 40960:
                target = os.readlink(name, dir_fd=fd)
                raise OSError("%s is a symbolic link (to %s)" % (where, target))
            nfd = os.open(name, O | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nfd
            cur = os.fstat(fd)
            if (cur.st_ino, cur.st_dev) != (st.st_ino, st.st_dev):
                raise OSError("%s changed while it was checked" % where)
        if cur.st_mode & 18:
            raise OSError("%s is writable by other users (mode %04o)" % (where, cur.st_mode & 4095))
        return os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    finally:
        os.close(fd)
def _sitepatch_code(digest, src):
    import marshal
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    d = _sitepatch_dir(os.path.abspath(base), ["sitepatch", "agent", digest])
    try:
        tag = ("%s %s %x\n" % (digest, sys.implementation.cache_tag, sys.hexversion)).encode()
        name = "agent-%s.bin" % sys.implementation.cache_tag
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=d)
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                data = f.read() if (st.st_mode & 61440) == 32768 and st.st_uid in (0, os.geteuid()) else b""
            if data.startswith(tag):
                return marshal.loads(data[len(tag):])
        except (OSError, ValueError, EOFError, TypeError):
            pass
        code = compile(src, "sitepatch-agent", "exec")
        tmp = "%s.%s.tmp" % (name, os.urandom(8).hex())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 384, dir_fd=d)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(tag + marshal.dumps(code))
            os.replace(tmp, name, src_dir_fd=d, dst_dir_fd=d)
        except BaseException:
            os.unlink(tmp, dir_fd=d)
            raise
        return code
    finally:
        os.close(d)
def _sitepatch_load():
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    head = sys.stdin.buffer.readline().split()
    src = sys.stdin.buffer.read(int(head[1]))
    note = ""
    try:
        code = _sitepatch_code(head[0].decode("ascii"), src)
    except Exception as e:
        note = "not keeping the agent's compiled code in the cache: %s" % (e,)
        code = compile(src, "sitepatch-agent", "exec")
    g = {"__name__": "sitepatch_agent", "__builtins__": __builtins__, "BOOT_NOTES": [note] if note else []}
    exec(code, g)
    return g["run"]
_sitepatch_load()()
)PY";

}  // namespace

std::string agent_boot_code() {
  return "import sys;exec(sys.stdin.buffer.read(" + std::to_string(sizeof(kBoot) - 1) + "))";
}

std::string agent_boot_payload() {
  static const std::string payload = [] {
    std::string source = embedded::agent_source;
    return std::string(kBoot) + std::string(embedded::agent_source_sha256).substr(0, 32) + " " +
           std::to_string(source.size()) +
           "\n" + source;
  }();
  return payload;
}

std::vector<std::string> agent_boot_argv(const std::string& python) {
  // -I: nothing from the caller's folder, PYTHONPATH or PYTHONSTARTUP-style settings
  // runs before the agent; the user's site folder is added back by the agent itself.
  // -S: no .pth file or sitecustomize runs before the agent has checked where they lie;
  // it then runs site.main() itself (agent/trust.py).
  return {python, "-I", "-S", "-u", "-c", agent_boot_code()};
}

}  // namespace sitepatch::host
