// reapply: after `pip install -U` or a reinstall, the recipes the history recorded go
// back through apply (same checks: requires, on-upgrade, overlaps) without the recipe
// files, which may be gone or changed since.
#include <map>

#include "engine/internal.hpp"
#include "engine/records/file_state.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

// Every applied patch's recipe text and where it was applied from, by id, over every
// history this environment reads.
std::map<std::string, store::PatchRecord> applied_records(Session& s) {
  std::map<std::string, store::PatchRecord> out;
  detail::each_history(s, [&](Session&, detail::HistoryAccess& h) {
    for (auto& r : h.patches()) out.emplace(r.id, std::move(r));
  });
  return out;
}

recipe::Recipe parse_recorded(const store::PatchRecord& r) {
  if (r.recipe_text.empty())
    throw Error("the history keeps no recipe for " + r.id + " (applied by an older sitepatch): apply its file again");
  // Messages name the history's copy (`show --recipe ID` prints it); the record keeps
  // pointing at the file it was first applied from.
  recipe::Recipe rec = detail::recorded_recipe(r, "history:" + r.id + "/recipe.yaml");
  rec.origin = r.recipe_path;
  if (rec.id != r.id)
    throw Error("the history's recipe for " + r.id + " has id " + rec.id + "; it cannot be reapplied");
  return rec;
}

}  // namespace

namespace {

// Why the recorded recipe `r` would not reapply as it stands, or "".
std::string blocker(Session& s, const store::PatchRecord& r) {
  if (r.recipe_text.empty()) return "";
  recipe::Recipe rec;
  try {
    rec = parse_recorded(r);
  } catch (const Error&) {
    return "";  // reapply itself says why
  }
  if (auto unmet = detail::requirements_unmet(s, rec); !unmet.empty()) {
    // plan's words end in "(--force applies anyway)": status gives the command itself.
    auto cut = unmet.rfind(" (--force applies anyway)");
    return cut == std::string::npos ? unmet : unmet.substr(0, cut);
  }
  if (rec.on_upgrade == recipe::OnUpgrade::reapply) return "";
  auto replaced = detail::upgrades_of(r, s.distributions());
  if (replaced.empty()) return "";
  return util::join(replaced, ", ") + " and the recipe says on-upgrade: " +
         std::string(recipe::on_upgrade_name(rec.on_upgrade)) + ": review the new version first";
}

}  // namespace

std::map<std::string, std::string> reapply_blockers(Session& s, const std::vector<PatchStatus>& patches) {
  std::map<std::string, std::string> out;
  if (patches.empty()) return out;
  auto records = applied_records(s);  // once, whatever the number of patches
  for (auto& p : patches)
    if (auto it = records.find(p.id); it != records.end())
      if (auto why = blocker(s, it->second); !why.empty()) out[p.id] = why;
  return out;
}

std::vector<std::string> finish_interrupted(Session& s) {
  {
    auto seen = detail::HistoryAccess::open(s, false);
    if (!seen) return {};
    auto records = seen->patches();
    if (!detail::any_pending(records) && detail::unchecked_ids(records).empty()) return {};
  }
  auto lock = s.host.lock(detail::lock_path(s), s.lock_timeout_ms);
  std::vector<store::PatchRecord> existing;
  std::vector<std::string> notes;
  detail::open_cleaned(s, *lock, existing, notes, nullptr);
  return notes;
}

Recorded recorded_recipes(Session& s, const std::vector<std::string>& ids, bool all) {
  Recorded out;
  auto statuses = verify(s, all ? std::vector<std::string>{} : ids);
  auto records = applied_records(s);
  for (auto& ps : statuses) {
    Advice a = advice_for(ps);
    if (a == Advice::drop) {
      std::string why = ps.files.front().upgrade + ": nothing to reapply it to; " +
                        detail::fix_command(s, "rollback " + ps.id) + " forgets the record";
      if (!all) throw Error("cannot reapply " + ps.id + ": " + why);
      out.left_out.push_back(ps.id + ": " + why);
      continue;
    }
    if (all && a == Advice::none) continue;  // intact: nothing to say
    if (all && a == Advice::review) {
      out.left_out.push_back(ps.id + ": its edits are there, in files someone else changed since; " +
                             detail::fix_command(s, "adopt --dry-run " + ps.id) + " shows their change");
      continue;
    }
    auto it = records.find(ps.id);
    if (it == records.end()) continue;  // verify named it, so a history holds it
    out.recipes.push_back(parse_recorded(it->second));
    if (!ps.shared_by.empty()) out.shared.push_back(ps.id);
  }
  return out;
}

}  // namespace sitepatch::engine
