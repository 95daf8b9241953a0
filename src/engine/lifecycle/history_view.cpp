// log and show: reading the history back, the environment's own and those of the
// folders it shares (homes.cpp).
#include <algorithm>
#include <cctype>

#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

std::vector<store::LogEntry> log(Session& s, bool diffs, size_t max) {
  std::vector<store::LogEntry> out;
  auto found = detail::each_history(s, [&](Session&, detail::HistoryAccess& h) {
    auto part = h.log();
    // The newest `max` of all histories are among the newest `max` of each.
    if (max && part.size() > max) part.resize(max);
    if (diffs)
      for (auto& e : part) e.diff = h.diff_of(e.oid);
    out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  });
  // Newest first across histories; each history's own order kept among equal times.
  if (found.size() > 1) std::stable_sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.time > b.time; });
  if (max && out.size() > max) out.resize(max);
  return out;
}

namespace {

std::vector<store::PatchRecord> applied(Session& s) {
  std::vector<store::PatchRecord> all;
  detail::each_history(s, [&](Session&, detail::HistoryAccess& h) {
    auto part = h.patches();
    all.insert(all.end(), part.begin(), part.end());
  });
  return all;
}

// Could name a commit as `log` prints them (10 characters) or git does (7).
bool commit_like(const std::string& what) {
  return what.size() >= 4 && what.size() <= 40 &&
         std::all_of(what.begin(), what.end(), [](unsigned char c) { return std::isxdigit(c); });
}

}  // namespace

std::string show_recipe(Session& s, const std::string& id) { return detail::select(applied(s), {id}).front().recipe_text; }

Shown show(Session& s, const std::string& what) {
  auto all = applied(s);
  Shown out;
  if (auto it = std::find_if(all.begin(), all.end(), [&](auto& r) { return r.id == what; }); it != all.end()) {
    out.id = it->id;
    for (auto& f : it->files) out.diff += store::unified_diff(f.before, f.after, f.rel);
    return out;
  }
  if (!commit_like(what)) detail::select(all, {what});  // throws: no such patch, naming those applied
  std::string prefix = what;
  for (auto& c : prefix) c = char(std::tolower(static_cast<unsigned char>(c)));
  std::vector<store::LogEntry> found;
  auto histories = detail::each_history(s, [&](Session&, detail::HistoryAccess& h) {
    for (auto& e : h.log())
      if (util::starts_with(e.oid, prefix)) {
        e.diff = h.diff_of(e.oid);
        found.push_back(std::move(e));
      }
  });
  if (found.size() > 1) {
    std::vector<std::string> names;
    for (auto& e : found) names.push_back(e.oid.substr(0, 12) + " (" + e.summary + ")");
    throw Error("commit prefix `" + what + "` is ambiguous: " + util::join(names, ", ") + "; give more of it");
  }
  if (found.empty()) {
    std::string where = histories.empty() ? s.state_dir + " (no history yet)" : util::join(histories, " or ");
    throw Error("no applied patch `" + what + "` and no commit starting with `" + what + "` in " + where);
  }
  out.commit = std::move(found.front());
  out.diff = out.commit->diff;
  return out;
}

}  // namespace sitepatch::engine
