// Two recipes on one target cannot both be undone: each keeps its own before/after of
// the function, and the later one's edit silently replaces the earlier one's. Refused at
// plan time, naming the other recipe and the remedy.
#include "engine/internal.hpp"

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

// A record's edit that replaced its whole module (no target, a replace-module recipe).
bool whole_module(const store::PatchRecord& r, const store::EditRecord& e) {
  return target_of(e.where).empty() && r.recipe_text.find("replace-module:") != std::string::npos;
}

}  // namespace

void refuse_overlaps(const Session& s, Plan& p, const std::vector<store::PatchRecord>& existing) {
  for (auto& st : p.edits) {
    if (st.state != EditState::will_apply || st.file.empty()) continue;
    std::string target = target_of(st.where);
    // A whole module replaced overlaps every edit of its file, either way round.
    bool whole = st.action == "replace-module";
    for (auto& r : existing) {
      if (r.id == st.recipe_id) continue;
      for (auto& e : r.edits) {
        if (e.rel != st.file) continue;
        if (!whole && !whole_module(r, e) && !nested(target, target_of(e.where))) continue;
        std::string what = whole ? "replace-module replaces the whole module, which recipe `" + r.id + "` patches (" + e.where + ")"
                           : whole_module(r, e) ? "recipe `" + r.id + "` replaced the whole module (" + e.where + ")"
                                                : target + " is already patched by recipe `" + r.id + "` (" + e.where + ")";
        st.state = EditState::failed;
        st.message = st.file + ": " + what + "; two recipes on one target cannot both be undone: roll `" + r.id +
                     "` back first (" + fix_command(s, "rollback " + r.id) + "), or merge the two recipes into one";
        break;
      }
      if (st.state == EditState::failed) break;
    }
  }
}

}  // namespace sitepatch::engine::detail
