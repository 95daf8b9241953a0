// The .py files of a folder tree, read through the Host.
#include <set>

#include "engine/internal.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

// Every .py file under `root`, one round of real paths and one of listings per folder
// depth. Each real folder is read once: a link to a folder above (`pkg/up -> ..`) would
// otherwise make the walk endless, and a link to a sibling would report its files
// twice. A link that leads out of the root (`pkg/all -> /`) is not followed: the scan is
// of this tree, and `/` would be the whole file system, read as root.
std::vector<PyFile> python_files(host::Host& host, const std::string& root, const std::string& rel_prefix,
                                 std::vector<std::string>* outside) {
  std::vector<PyFile> out;
  std::string real_root;  // from the first round, whose one folder is root
  auto below = [&real_root](const std::string& rel) {
    return rel.empty() ? real_root : (real_root == "/" ? "" : real_root) + "/" + rel;
  };
  auto inside = [&real_root](const std::string& p) {
    return p == real_root || util::starts_with(p, real_root == "/" ? "/" : real_root + "/");
  };
  std::vector<std::string> level = {""}, files;
  std::set<std::string> seen;
  while (!level.empty() || !files.empty()) {
    // The folders of this depth and the files of the one above, resolved in one round.
    std::vector<std::string> paths;
    for (auto& l : level) paths.push_back(l.empty() ? root : root + "/" + l);
    for (auto& f : files) paths.push_back(root + "/" + f);
    auto real = host.realpath(paths);
    real.resize(paths.size());
    if (real_root.empty()) {
      if (!real[0]) return out;
      real_root = *real[0];
    }
    for (size_t i = 0; i < files.size(); ++i) {
      auto& r = real[level.size() + i];
      if (r && inside(*r)) out.push_back({root + "/" + files[i], rel_prefix + files[i]});
      else if (r && outside) outside->push_back(rel_prefix + files[i]);
    }
    files.clear();
    std::vector<std::string> fresh, dirs;
    // A folder reached both as itself and through a link inside the tree is named as
    // itself, whatever order the listing gave: folders that are no link go first.
    for (int linked = 0; linked < 2; ++linked)
      for (size_t i = 0; i < level.size(); ++i) {
        if (!real[i] || (*real[i] != below(level[i])) != bool(linked)) continue;
        if (!inside(*real[i])) {
          if (outside) outside->push_back(rel_prefix + level[i]);
          continue;
        }
        if (seen.insert(*real[i]).second) {
          fresh.push_back(level[i]);
          dirs.push_back(paths[i]);
        }
      }
    level = std::move(fresh);
    if (level.empty()) continue;
    auto listings = host.list_many(dirs);
    std::vector<std::string> next;
    for (size_t i = 0; i < level.size() && i < listings.size(); ++i)
      for (auto& e : listings[i]) {
        if (e.name.empty() || e.name[0] == '.' || e.name == "__pycache__") continue;
        std::string rel = level[i].empty() ? e.name : level[i] + "/" + e.name;
        if (e.is_dir) next.push_back(rel);
        else if (util::ends_with(e.name, ".py")) files.push_back(rel);
      }
    level = std::move(next);
  }
  return out;
}

}  // namespace sitepatch::engine::detail
