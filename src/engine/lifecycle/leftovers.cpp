// What an interrupted command can leave behind, cleaned by the next writer while it
// holds the environment's lock (so nothing it removes can belong to a live command):
// libgit2's lock files in the history, and sitepatch's temps beside patched files.
#include <set>

#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

std::vector<std::string> clean_history_locks(Session& s) {
  // libgit2 takes `<file>.lock` beside what it updates: the config, HEAD, refs, packs.
  std::vector<std::string> dirs = {s.state_dir, s.state_dir + "/refs", s.state_dir + "/refs/heads",
                                   s.state_dir + "/objects/pack"};
  // A remote history is fetched whole under this lock anyway: its copy lists these
  // folders (files only, as is all this looks at) without a round trip of its own.
  auto listings = s.host.local() ? s.host.list_many(dirs) : HistoryAccess::listing(s, dirs);
  std::vector<std::string> doomed;
  for (size_t i = 0; i < dirs.size(); ++i)
    for (auto& e : listings[i]) {
      if (e.is_dir) continue;
      bool git_lock = util::ends_with(e.name, ".lock") && !(i == 0 && e.name == "sitepatch.lock");
      if (git_lock || util::is_leftover_temp(e.name)) doomed.push_back(dirs[i] + "/" + e.name);
    }
  if (doomed.empty()) return {};
  s.host.remove(doomed);
  if (!s.host.local()) HistoryAccess::forget(s, doomed);
  std::vector<std::string> names;
  for (auto& d : doomed) names.push_back(d.substr(s.state_dir.size() + 1));
  spdlog::info("history: removed {}", util::join(names, ", "));
  return {"removed " + std::to_string(doomed.size()) + " lock file(s) an interrupted sitepatch left in " +
          s.state_dir + ": " + util::join(names, ", ")};
}

std::vector<std::string> own_site_dirs(const Session& s) {
  // Not a shared folder: another environment's writer may be at work in it (temp_folders
  // adds one only where this history's files are).
  std::vector<std::string> out;
  for (auto& d : s.env.site_dirs)
    if (site::shared_owner(s.env, d).empty()) out.push_back(d);
  return out;
}

std::vector<std::string> temp_folders(Session& s, const std::vector<store::PatchRecord>& records) {
  // The notes' temps in the environment's own site folders, and beside this history's files.
  std::set<std::string> folders;
  for (auto& d : own_site_dirs(s)) folders.insert(d);
  std::vector<std::pair<std::string, std::string>> files;
  for (auto& r : records)
    for (auto& f : r.files) files.emplace_back(f.site_dir, f.rel);
  s.distributions().prefetch(files);  // every owner in one round trip
  for (auto& r : records)
    for (auto& f : r.files) {
      folders.insert(split_path(f.site_dir + "/" + f.rel).first);
      // Its RECORD is written with it (record_sync.cpp).
      if (const site::Distribution* d = s.distributions().owner(f.site_dir, f.rel); d && !d->dist_info.empty())
        folders.insert(d->site_dir + "/" + d->dist_info);
    }
  return {folders.begin(), folders.end()};
}

namespace {

/// For each path, whether its folder really lies in one of the environment's site
/// folders (a symlinked package folder may lead anywhere).
std::vector<bool> within_site(Session& s, const std::vector<std::string>& paths) {
  std::vector<std::string> ask = s.env.site_dirs;
  for (auto& p : paths) ask.push_back(split_path(p).first);
  auto real = s.host.realpath(ask);
  size_t n = s.env.site_dirs.size();
  std::vector<bool> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    bool ok = false;
    for (size_t k = 0; k < n && real[n + i]; ++k) ok = ok || (real[k] && util::inside(*real[n + i], *real[k]));
    out.push_back(ok);
  }
  return out;
}

}  // namespace

std::vector<std::string> clean_temps(Session& s, const std::vector<store::PatchRecord>& records, host::Lock& lock) {
  auto dirs = temp_folders(s, records);
  auto listings = s.host.list_many(dirs);
  // Only what a killed writer of this history made: a temp's name begins with its
  // writer's tag, which the lock names until it is released. A user's own file that
  // merely looks like one, or another history's, stays.
  auto tags = lock.unfinished();
  std::vector<std::string> doomed;
  for (size_t i = 0; i < dirs.size(); ++i)
    for (auto& e : listings[i])
      if (!e.is_dir && host::left_by(e.name, tags)) doomed.push_back(dirs[i] + "/" + e.name);
  if (doomed.empty()) return {};
  // Nor through a link that leads out of the site folder the files are in.
  auto inside = within_site(s, doomed);
  std::vector<std::string> kept;
  for (size_t i = 0; i < doomed.size(); ++i)
    if (inside[i]) kept.push_back(doomed[i]);
  if (kept.empty()) return {};
  s.host.remove(kept);
  // A count and the folders, not every name: a recipe of hundreds of files leaves hundreds
  // (-v lists them).
  std::set<std::string> where;
  for (auto& k : kept) where.insert(split_path(k).first);
  spdlog::info("removed {}", util::join(kept, ", "));
  return {"removed " + std::to_string(kept.size()) + " temporary file(s) an interrupted sitepatch left in " +
          (where.size() == 1 ? *where.begin() : std::to_string(where.size()) + " folders")};
}

}  // namespace sitepatch::engine::detail
