// log and show: reading the history back, the environment's own and those of the
// folders it shares (homes.cpp).
#include <algorithm>

#include "history_access.hpp"
#include "internal.hpp"

namespace sitepatch::engine {

std::vector<store::LogEntry> log(Session& s) {
  std::vector<store::LogEntry> out;
  auto found = detail::each_history(s, [&](Session&, detail::HistoryAccess& h) {
    auto part = h.log();
    out.insert(out.end(), part.begin(), part.end());
  });
  // Newest first across histories; each history's own order kept among equal times.
  if (found.size() > 1) std::stable_sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.time > b.time; });
  return out;
}

namespace {

store::PatchRecord applied(Session& s, const std::string& id) {
  std::vector<store::PatchRecord> all;
  detail::each_history(s, [&](Session&, detail::HistoryAccess& h) {
    auto part = h.patches();
    all.insert(all.end(), part.begin(), part.end());
  });
  return detail::select(all, {id}).front();
}

}  // namespace

std::string show_recipe(Session& s, const std::string& id) { return applied(s, id).recipe_text; }

std::string show(Session& s, const std::string& id) {
  auto r = applied(s, id);
  std::string out;
  for (auto& f : r.files) out += store::unified_diff(f.before, f.after, f.rel);
  return out;
}

}  // namespace sitepatch::engine
