// Two recipes on one target cannot both be undone: each keeps its own before/after of
// the function, and the later one's edit silently replaces the earlier one's. Refused at
// plan time, naming the other recipe and the remedy.
#include "internal.hpp"

namespace sitepatch::engine::detail {
namespace {

std::string target_of(const std::string& where) {
  size_t colon = where.rfind(':');
  return colon == std::string::npos ? "" : where.substr(colon + 1);
}

/// `a` and `b` name the same definition, or one is inside the other (Cls and Cls.m).
bool nested(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  auto within = [](const std::string& x, const std::string& y) {
    return x.size() > y.size() && x.compare(0, y.size(), y) == 0 && x[y.size()] == '.';
  };
  return a == b || within(a, b) || within(b, a);
}

}  // namespace

void refuse_overlaps(const Session& s, Plan& p, const std::vector<store::PatchRecord>& existing) {
  for (auto& st : p.edits) {
    if (st.state != EditState::will_apply || st.file.empty()) continue;
    std::string target = target_of(st.where);
    for (auto& r : existing) {
      if (r.id == st.recipe_id) continue;
      for (auto& e : r.edits) {
        if (e.rel != st.file || !nested(target, target_of(e.where))) continue;
        st.state = EditState::failed;
        st.message = st.file + ": " + target + " is already patched by recipe `" + r.id + "` (" + e.where +
                     "); two recipes on one target cannot both be undone: roll `" + r.id + "` back first (" +
                     fix_command(s, "rollback " + r.id) + "), or merge the two recipes into one";
        break;
      }
      if (st.state == EditState::failed) break;
    }
  }
}

}  // namespace sitepatch::engine::detail
