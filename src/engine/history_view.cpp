// log and show: reading the history back.
#include "history_access.hpp"
#include "internal.hpp"

namespace sitepatch::engine {

std::vector<store::LogEntry> log(Session& s) {
  auto lock = detail::read_lock(s);
  auto history = detail::HistoryAccess::open(s, false);
  if (!history) return {};
  return history->log();
}

namespace {

store::PatchRecord applied(Session& s, const std::string& id) {
  auto lock = detail::read_lock(s);
  auto history = detail::HistoryAccess::open(s, false);
  std::vector<store::PatchRecord> all = history ? history->patches() : std::vector<store::PatchRecord>{};
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
