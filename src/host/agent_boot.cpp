#include "host/agent_boot.hpp"

#include "sitepatch_agent_source.hpp"

namespace sitepatch::host {
namespace {

// Python 3 of any age must get as far as the agent's own version check, so no newer
// syntax here. The copy is trusted only in a folder the running user owns and nobody
// else may write to, and only when its bytes are the ones sent; anything unusual runs
// the sent source directly, as before.
const char kBoot[] = R"PY(import os, sys
def _sitepatch_load():
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    head = sys.stdin.buffer.readline().split()
    src = sys.stdin.buffer.read(int(head[1]))
    try:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "sitepatch", "agent", head[0].decode("ascii"))
        p = os.path.join(d, "sitepatch_agent.py")
        try:
            with open(p, "rb") as f:
                same = f.read() == src
        except OSError:
            same = False
        if not same:
            os.makedirs(d, 0o700, exist_ok=True)
            import shutil
            shutil.rmtree(os.path.join(d, "__pycache__"), ignore_errors=True)
            t = "%s.%d.tmp" % (p, os.getpid())
            with open(t, "wb") as f:
                f.write(src)
            os.replace(t, p)
        st = os.lstat(d)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022 or (st.st_mode & 0o170000) != 0o040000:
            raise OSError(d)
    except Exception:
        g = {"__name__": "sitepatch_agent", "__builtins__": __builtins__}
        exec(compile(src, "sitepatch-agent", "exec"), g)
        return g["run"]
    sys.path.insert(0, d)
    # The copy is there for its bytecode, also where an image sets PYTHONDONTWRITEBYTECODE.
    keep, sys.dont_write_bytecode = sys.dont_write_bytecode, False
    try:
        import sitepatch_agent
    finally:
        del sys.path[0]
        sys.dont_write_bytecode = keep
    return sitepatch_agent.run
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
  return {python, "-u", "-c", agent_boot_code()};
}

}  // namespace sitepatch::host
