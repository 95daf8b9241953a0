// The .py files of a folder tree, read through the Host.
#include <set>

#include "engine/internal.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

// Every .py file under `root`, one listing round per folder depth. Each real folder is
// read once: a link to a folder above (`pkg/up -> ..`) would otherwise make the walk
// endless, and a link to a sibling would report its files twice.
std::vector<PyFile> python_files(host::Host& host, const std::string& root, const std::string& rel_prefix) {
  std::vector<PyFile> out;
  std::vector<std::string> level = {""};
  std::set<std::string> seen;
  while (!level.empty()) {
    std::vector<std::string> dirs;
    for (auto& l : level) dirs.push_back(l.empty() ? root : root + "/" + l);
    auto real = host.realpath(dirs);
    std::vector<std::string> fresh;
    for (size_t i = 0; i < level.size(); ++i)
      if (real[i] && seen.insert(*real[i]).second) fresh.push_back(level[i]);
    if (fresh.size() != level.size()) {
      level = std::move(fresh);
      dirs.clear();
      for (auto& l : level) dirs.push_back(l.empty() ? root : root + "/" + l);
    }
    auto listings = host.list_many(dirs);
    std::vector<std::string> next;
    for (size_t i = 0; i < level.size(); ++i)
      for (auto& e : listings[i]) {
        if (e.name.empty() || e.name[0] == '.' || e.name == "__pycache__") continue;
        std::string rel = level[i].empty() ? e.name : level[i] + "/" + e.name;
        if (e.is_dir) next.push_back(rel);
        else if (util::ends_with(e.name, ".py")) out.push_back({root + "/" + rel, rel_prefix + rel});
      }
    level = std::move(next);
  }
  return out;
}

}  // namespace sitepatch::engine::detail
