// explain: which files a log may make it read. A log is text anyone may write (issue 48:
// a frame named /proc/self/environ, or site-packages/../../x, and the report quoted what
// it read there as the line "now"), so a frame's file is read only when it is a Python
// source where a frame's file can be: below a site folder (no `..`) for a library frame,
// and for the user's frame a `.py` file whose real path is no kernel interface and, for
// root, no folder another user could change.
#include <unistd.h>

#include "engine/explain/explain_impl.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

namespace {

bool python_source(const std::string& path) { return util::ends_with(path, ".py") && path.size() > 3; }

// Kernel and device trees: "files" there are state (an environment, memory), not code.
bool kernel_tree(const std::string& path) {
  for (const char* root : {"/proc", "/sys", "/dev", "/run"})
    if (util::inside(path, root)) return true;
  return false;
}

}  // namespace

std::string library_source_problem(const std::string& rel) {
  bool plain = !rel.empty() && rel[0] != '/';
  for (auto& seg : util::split(rel, '/')) plain = plain && !seg.empty() && seg != "." && seg != "..";
  if (!plain) return rel + " leaves site-packages, so it is not read (a frame's file is below a site folder)";
  if (!python_source(rel)) return rel + " is not a Python source (.py), so it is not read";
  return "";
}

std::vector<std::string> user_source_problems(Session& s, const std::vector<std::string>& paths) {
  std::vector<std::string> out(paths.size());
  std::vector<std::string> asked;
  std::vector<size_t> which;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& p = paths[i];
    bool plain = !p.empty() && p[0] == '/';
    for (auto& seg : util::split(p.substr(plain ? 1 : 0), '/')) plain = plain && seg != "." && seg != "..";
    if (!plain) out[i] = "not an absolute path without . or ..";
    else if (!python_source(p)) out[i] = "not a Python source (.py)";
    else if (kernel_tree(p)) out[i] = "inside " + p.substr(0, p.find('/', 1)) + ", which holds no source";
    else {
      asked.push_back(p);
      which.push_back(i);
    }
  }
  // Where each leads: a `model.py` that is a link to /proc/self/environ is no source either.
  auto real = s.host.realpath(asked);
  for (size_t k = 0; k < asked.size(); ++k) {
    std::string& why = out[which[k]];
    if (k >= real.size() || !real[k]) continue;  // missing: read() says so
    if (!python_source(*real[k])) why = "it leads to " + *real[k] + ", not a Python source (.py)";
    else if (kernel_tree(*real[k])) why = "it leads to " + *real[k] + ", which holds no source";
    // Root reads nothing another user could swap in: the check sitepatch makes on every path.
    else if (s.host.local() && ::geteuid() == 0)
      if (auto unsafe = util::unsafe_path(asked[k])) why = *unsafe;
  }
  return out;
}

}  // namespace sitepatch::engine::detail
