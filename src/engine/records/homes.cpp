// The histories a command looks at besides the environment's own. A venv made with
// --system-site-packages, or one with a .pth file, imports from folders it does not
// own; a patch written there with --system keeps its history with the folder's owner
// (site::history_home), so that every environment that sees the folder, and the
// owner's own Python, lists, verifies and rolls it back, and deleting the venv loses
// nothing. Each such history is read through a Session of its own, whose prefix is
// the owner's and whose site folders are only the ones that history keeps.
#include <map>

#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

Session Session::for_home(const site::HistoryHome& home) const {
  site::Environment e = env;
  e.prefix = home.prefix;
  e.base_prefix = home.prefix;
  e.pth_dirs.clear();  // in the owner's view the folder is its own
  e.site_dirs.clear();
  for (auto& d : env.site_dirs) {
    auto h = site::history_home(env, d);
    if (h && h->state_dir == home.state_dir) e.site_dirs.push_back(d);
  }
  Session out(host, std::move(e), home.state_dir);
  out.force = force;
  out.system = system;
  out.missing_ok = missing_ok;
  out.lock_timeout_ms = lock_timeout_ms;
  out.invocation = invocation;
  out.shared_by = home.owner;
  out.dists_ = dists_;  // read once per command, whichever history asks
  return out;
}

namespace detail {

std::vector<Session> shared_homes(Session& s, bool existing_only) {
  std::map<std::string, site::HistoryHome> homes;
  for (auto& d : s.env.site_dirs)
    if (auto h = site::history_home(s.env, d); h && h->state_dir != s.state_dir) homes.emplace(h->state_dir, *h);
  if (homes.empty()) return {};
  std::vector<std::string> dirs;
  for (auto& [dir, _] : homes) dirs.push_back(dir);
  auto found = existing_only ? s.host.read(dirs) : std::vector<host::FileData>{};
  std::vector<Session> out;
  size_t i = 0;
  for (auto& [dir, home] : homes) {
    bool there = !existing_only || (found[i].exists && found[i].is_dir);
    ++i;
    if (there) out.push_back(s.for_home(home));
  }
  return out;
}

std::vector<std::string> each_history(Session& s, const std::function<void(Session&, HistoryAccess&)>& f) {
  auto homes = shared_homes(s);
  std::vector<Session*> where{&s};
  for (auto& h : homes) where.push_back(&h);
  std::vector<std::string> found;
  for (auto* w : where) {
    auto lock = read_lock(*w);
    auto history = HistoryAccess::open(*w, false);
    if (!history) continue;
    found.push_back(w->state_dir);
    f(*w, *history);
  }
  return found;
}

std::optional<Session> home_of_recipes(Session& s, const Plan& p) {
  // Each recipe's files, by the history that keeps them ("" = this environment's).
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_recipe;
  std::map<std::string, site::HistoryHome> homes;
  for (auto& fc : p.files) {
    auto h = site::history_home(s.env, fc.site_dir);
    std::string key = h ? h->state_dir : "";
    if (h) homes.emplace(key, *h);
    for (auto& [id, _] : fc.steps) by_recipe[id][key].push_back(fc.site_dir + "/" + fc.rel);
  }
  std::map<std::string, std::vector<std::string>> recipes_of;  // history -> recipe ids
  for (auto& [id, where] : by_recipe) {
    if (where.size() > 1) {
      std::vector<std::string> parts;
      for (auto& [key, files] : where)
        parts.push_back(util::join(files, ", ") + " (" +
                        (key.empty() ? "this environment's history" : "history in " + key + ", with " +
                                                                          homes.at(key).owner) +
                        ")");
      throw Error("recipe " + id + " changes files whose histories differ: " + util::join(parts, "; ") +
                  ". Each apply is all or nothing in one history: split the recipe, one per folder; "
                  "nothing was written");
    }
    recipes_of[where.begin()->first].push_back(id);
  }
  if (recipes_of.empty() || (recipes_of.size() == 1 && recipes_of.count(""))) return std::nullopt;
  if (recipes_of.size() > 1) {
    std::vector<std::string> parts;
    for (auto& [key, ids] : recipes_of)
      parts.push_back(util::join(ids, ", ") + " -> " + (key.empty() ? s.state_dir : key));
    throw Error("these recipes keep their histories in different places (" + util::join(parts, "; ") +
                "); each apply is all or nothing in one history: apply them in separate commands; "
                "nothing was written");
  }
  return s.for_home(homes.at(recipes_of.begin()->first));
}

}  // namespace detail
}  // namespace sitepatch::engine
