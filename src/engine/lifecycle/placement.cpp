// Where a planned file lives and who else sees it. A venv made with
// --system-site-packages (or a .pth file) lets `import` find modules in folders the
// environment does not own: a system folder shared by every Python on the machine and
// replaced by apt, or a base interpreter every venv over it shares. Plan says so, and
// apply writes there only when told to (--system).
#include <cctype>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

namespace {

const char* kDpkgInfo = "/var/lib/dpkg/info/";

// dpkg's file lists are plain files (so this works over ssh too); Debian names a
// module's package python3-<top-level name>, which is the one list worth reading.
void find_debian_packages(Session& s, Plan& p) {
  if (!s.env.dpkg) return;
  std::vector<std::string> lists;
  std::vector<FileChange*> of;
  for (auto& fc : p.files) {
    if (!site::is_within(fc.site_dir, "/usr/lib")) continue;
    std::string top = fc.rel.substr(0, fc.rel.find('/'));
    if (util::ends_with(top, ".py")) top.resize(top.size() - 3);
    std::string name = "python3-";
    for (char c : top) name += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    lists.push_back(kDpkgInfo + name + ".list");
    of.push_back(&fc);
  }
  if (lists.empty()) return;
  auto found = s.host.read(lists);
  for (size_t i = 0; i < found.size(); ++i) {
    if (!found[i].exists) continue;
    std::string text = "\n" + found[i].content;
    if (text.find("\n" + of[i]->path + "\n") == std::string::npos) continue;
    std::string list = lists[i].substr(std::string(kDpkgInfo).size());
    of[i]->debian_package = list.substr(0, list.size() - 5);
  }
}

std::string package_words(const FileChange& fc) {
  return fc.debian_package.empty() ? "" : ", Debian package " + fc.debian_package;
}

// PEP 668: a Python whose packages another package manager owns says so with a marker
// in its standard library; inside a venv it does not apply.
std::string externally_managed(Session& s) {
  if (s.env.prefix != s.env.base_prefix) return "";
  auto parts = util::split(s.env.version, '.');
  if (parts.size() < 2) return "";
  std::string marker = s.env.prefix + "/lib/python" + parts[0] + "." + parts[1] + "/EXTERNALLY-MANAGED";
  auto f = s.host.read({marker});
  return f[0].exists && !f[0].is_dir ? marker : "";
}

// The environment's own files that another package manager owns: the next apt upgrade
// (or whatever owns the marker) puts its own bytes back.
std::vector<std::string> managed_files(Session& s, const Plan& p) {
  std::vector<std::string> out;
  std::string marker;
  bool asked = false;
  for (auto& fc : p.files) {
    if (!site::shared_owner(s.env, fc.site_dir).empty()) continue;  // said as a shared folder
    if (!fc.debian_package.empty()) {
      out.push_back(fc.path + " belongs to the Debian package " + fc.debian_package +
                    ": the next apt upgrade of it replaces the file");
      continue;
    }
    if (!asked) marker = externally_managed(s), asked = true;
    if (!marker.empty())
      out.push_back(fc.path + " belongs to a Python another package manager owns (" + marker +
                    "): its next upgrade may replace the file");
  }
  return out;
}

}  // namespace

void note_placement(Session& s, Plan& p) {
  find_debian_packages(s, p);
  for (auto& line : managed_files(s, p)) p.placement.push_back(line + (s.system ? "" : "; apply needs --system"));
  for (auto& line : editable_files(s, p)) p.placement.push_back(line + "; apply refuses it");
  std::set<std::string> said;
  for (auto& fc : p.files) {
    spdlog::info("plan: {} is {}", fc.rel, fc.path);
    if (const site::Distribution* d = s.distributions().owner(fc.site_dir, fc.rel); d && !d->conda_meta.empty())
      p.placement.push_back(fc.rel + " is listed by conda's " + d->conda_meta + " (" + d->name + " " + d->version +
                            "), not by a dist-info: the next conda install or update of " + d->name +
                            " replaces it, and status says so");
    std::string owner = site::shared_owner(s.env, fc.site_dir);
    if (!owner.empty() && said.insert(fc.site_dir).second)
      p.placement.push_back(fc.rel + " is in " + fc.site_dir +
                            (fc.debian_package.empty() ? "" : " (Debian package " + fc.debian_package + ")") +
                            ", which belongs to " + owner +
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

void refuse_shared(Session& s, const Plan& p) {
  auto editable = editable_files(s, p);
  if (!editable.empty()) throw Error("refusing to patch an editable install: " + util::join(editable, "; ") +
                                     "; nothing was written");
  if (!s.system) {
    auto managed = managed_files(s, p);
    if (!managed.empty())
      throw Error("refusing to write files another package manager owns: " + util::join(managed, "; ") +
                  "; nothing was written. Give --system to patch them anyway (the history is kept in " +
                  s.state_dir + ")");
  }
  std::vector<std::string> lines;
  std::set<std::string> seen;
  for (auto& fc : p.files) {
    std::string owner = site::shared_owner(s.env, fc.site_dir);
    if (owner.empty() || !seen.insert(fc.site_dir).second) continue;
    lines.push_back(fc.site_dir + " (" + fc.rel + package_words(fc) + ") belongs to " + owner);
  }
  if (lines.empty()) return;
  if (s.system) return;  // apply_at_home has moved the apply to the folder's owner
  throw Error("refusing to write outside this environment: " + util::join(lines, "; ") +
              ". Every environment that shares that folder would change, and the patch would outlive "
              "this environment; nothing was written. Give --system to patch it anyway");
}

}  // namespace sitepatch::engine::detail
