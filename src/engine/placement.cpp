// Where a planned file lives and who else sees it. A venv made with
// --system-site-packages (or a .pth file) lets `import` find modules in folders the
// environment does not own: a system folder shared by every Python on the machine and
// replaced by apt, or a base interpreter every venv over it shares. Plan says so, and
// apply writes there only when told to (--system).
#include <set>

#include <spdlog/spdlog.h>

#include "internal.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

void note_placement(Session& s, Plan& p) {
  std::set<std::string> said;
  for (auto& fc : p.files) {
    spdlog::info("plan: {} is {}", fc.rel, fc.path);
    std::string owner = site::shared_owner(s.env, fc.site_dir);
    if (!owner.empty() && said.insert(fc.site_dir).second)
      p.placement.push_back(fc.rel + " is in " + fc.site_dir + ", which belongs to " + owner +
                        ", not to this environment: every environment that uses it would change" +
                        (s.system ? "" : "; apply needs --system"));
  }
  // A module found first here hides the same file further down sys.path.
  std::vector<std::string> later, rel_of;
  for (auto& fc : p.files) {
    bool past = false;
    for (auto& d : s.env.site_dirs) {
      if (past) {
        later.push_back(d + "/" + fc.rel);
        rel_of.push_back(fc.path);
      }
      past = past || d == fc.site_dir;
    }
  }
  if (later.empty()) return;
  auto found = s.host.read(later);
  for (size_t i = 0; i < found.size(); ++i)
    if (found[i].exists && !found[i].is_dir)
      p.placement.push_back(rel_of[i] + " is the file Python imports; it shadows " + later[i] +
                        ", which this plan leaves alone");
}

void refuse_shared(const Session& s, const Plan& p) {
  std::vector<std::string> lines;
  std::set<std::string> seen;
  for (auto& fc : p.files) {
    std::string owner = site::shared_owner(s.env, fc.site_dir);
    if (owner.empty() || !seen.insert(fc.site_dir).second) continue;
    lines.push_back(fc.site_dir + " (" + fc.rel + ") belongs to " + owner);
  }
  if (lines.empty()) return;
  if (s.system) {
    spdlog::warn("--system: writing outside this environment ({}); its history stays in {}: deleting this "
                 "environment loses it (a .sitepatch-patched.json beside the files says where it was)",
                 util::join(lines, "; "), s.state_dir);
    return;
  }
  throw Error("refusing to write outside this environment: " + util::join(lines, "; ") +
              ". Every environment that shares that folder would change, and the patch would outlive "
              "this environment; nothing was written. Give --system to patch it anyway");
}

}  // namespace sitepatch::engine::detail
