// log and show: reading the history back.
#include "history_access.hpp"
#include "internal.hpp"

namespace sitepatch::engine {

std::vector<store::LogEntry> log(Session& s) {
  auto history = detail::HistoryAccess::open(s, false);
  if (!history) return {};
  return history->log();
}

std::string show(Session& s, const std::string& id) {
  auto history = detail::HistoryAccess::open(s, false);
  std::vector<store::PatchRecord> all = history ? history->patches() : std::vector<store::PatchRecord>{};
  auto r = detail::select(all, {id}).front();
  std::string out;
  for (auto& f : r.files) out += store::unified_diff(f.before, f.after, f.rel);
  return out;
}

}  // namespace sitepatch::engine
