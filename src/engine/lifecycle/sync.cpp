// sync: a declared set of recipes, applied and nothing else (sync.hpp). Each step is one
// of the other commands' (apply, reapply, rollback); sync decides which, and runs them
// under one lock so no other writer sees the environment half-way.
#include "sitepatch/engine/sync.hpp"
#include "sitepatch/engine/wheel.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "engine/edits/unbound.hpp"
#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

std::string_view step_name(SyncStep::Kind k) {
  switch (k) {
    case SyncStep::in_sync: return "in sync";
    case SyncStep::apply: return "apply";
    case SyncStep::reapply: return "reapply";
    case SyncStep::replace: return "replace";
    case SyncStep::rollback: return "roll back";
    case SyncStep::left_out: return "left out";
    case SyncStep::blocked: return "blocked";
  }
  return "in sync";
}

bool SyncResult::any(SyncStep::Kind k) const {
  return std::any_of(steps.begin(), steps.end(), [&](const SyncStep& s) { return s.kind == k; });
}

bool SyncResult::changes() const {
  return any(SyncStep::apply) || any(SyncStep::reapply) || any(SyncStep::replace) || any(SyncStep::rollback);
}

namespace {

// The step for recipe `r` of the set, given what verify says of the patch of its id.
SyncStep step_for(Session& s, const recipe::Recipe& r, const PatchStatus* applied) {
  SyncStep st;
  st.id = r.id;
  st.recipe = r.path;
  std::string unmet = detail::requirements_unmet(s, r);
  if (!unmet.empty()) {
    auto cut = unmet.rfind(" (--force applies anyway)");
    st.kind = SyncStep::left_out;
    st.why = cut == std::string::npos ? unmet : unmet.substr(0, cut);
    return st;
  }
  if (!applied) {
    st.kind = SyncStep::apply;
    st.why = "not applied";
    return st;
  }
  if (!applied->recipe_hash.empty() && applied->recipe_hash != r.hash) {
    st.kind = SyncStep::replace;
    st.why = "its recipe changed since it was applied";
    return st;
  }
  switch (advice_for(*applied)) {
    case Advice::none:
      st.kind = SyncStep::in_sync;
      st.why = "applied";
      return st;
    case Advice::reapply: {
      st.kind = SyncStep::reapply;
      const FileStatus& f = applied->files.front();
      st.why = f.upgrade.empty() ? "a reinstall took its edits away" : f.upgrade + " took its edits away";
      return st;
    }
    case Advice::drop:
      st.kind = SyncStep::left_out;
      st.why = applied->files.front().upgrade + ": its package is not installed";
      return st;
    case Advice::review:
      break;
  }
  st.kind = SyncStep::blocked;
  std::string changed;
  for (const FileStatus& f : applied->files)
    if (f.state == FileState::modified) changed += (changed.empty() ? "" : ", ") + f.rel;
  st.why = (changed.empty() ? "its files" : changed) + " changed by someone else since it was applied: " +
           detail::fix_command(s, "adopt " + r.id) + " keeps that change as the patch's, or " +
           detail::fix_command(s, "rollback " + r.id) + " puts pip's bytes back for the next sync";
  return st;
}

// verify's answer for this environment's own history, under the lock the caller holds.
std::vector<PatchStatus> statuses(Session& s) {
  auto history = detail::HistoryAccess::open(s, false);
  if (!history) return {};
  auto all = history->patches();
  std::map<std::string, host::FileData> now;
  return detail::statuses_of(s, *history, all, all, now);
}

// A recipe no history applied that the installed distribution came patched with (a
// wheel sitepatch wheel built): in sync when it is this content, else blocked (a
// rollback cannot take a wheel's edits away).
std::optional<SyncStep> shipped_step(Session& s, const recipe::Recipe& r, const std::vector<ShippedPatch>& shipped) {
  for (auto& p : shipped)
    for (auto& sr : p.recipes) {
      // Believed only when its files are its distribution's and hold what it shipped:
      // otherwise the recipe is applied as any other.
      if (sr.id != r.id || !shipped_intact(s, p)) continue;
      SyncStep st;
      st.id = r.id;
      st.recipe = r.path;
      st.kind = sr.hash == r.hash ? SyncStep::in_sync : SyncStep::blocked;
      st.why = sr.hash == r.hash ? "shipped patched in " + p.dist + " " + p.version
                                 : "the installed " + p.dist + " " + p.version + " came patched with another content of " +
                                       r.id + ": install the wheel " + detail::fix_command(s, "wheel " + r.path) +
                                       " makes, or the unpatched one";
      return st;
    }
  return std::nullopt;
}

std::vector<SyncStep> steps_for(Session& s, const std::vector<recipe::Recipe>& recipes, bool keep_others) {
  std::map<std::string, PatchStatus> applied;
  for (auto& p : statuses(s)) applied.emplace(p.id, std::move(p));
  std::optional<std::vector<ShippedPatch>> shipped;  // one search, when the set holds a recipe
  std::vector<SyncStep> out;
  for (const recipe::Recipe& r : recipes) {
    auto it = applied.find(r.id);
    if (!shipped) shipped = shipped_patches(s);
    if (auto st = shipped_step(s, r, *shipped)) {
      if (it != applied.end() && st->kind == SyncStep::in_sync) {
        // Applied here before the patched wheel came: its record describes files pip replaced.
        st->kind = SyncStep::reapply;
        st->why += ": its record of the version before is dropped";
      }
      out.push_back(std::move(*st));
      continue;
    }
    out.push_back(step_for(s, r, it == applied.end() ? nullptr : &it->second));
  }
  for (auto& [id, p] : applied) {
    if (std::any_of(recipes.begin(), recipes.end(), [&](const recipe::Recipe& r) { return r.id == id; })) continue;
    SyncStep st;
    st.id = id;
    st.kind = keep_others ? SyncStep::in_sync : SyncStep::rollback;
    st.why = keep_others ? "applied, not in the set (--keep-others)" : "applied, not in the set";
    out.push_back(std::move(st));
  }
  std::sort(out.begin(), out.end(), [](const SyncStep& a, const SyncStep& b) { return a.id < b.id; });
  return out;
}

std::vector<std::string> ids_of(const std::vector<SyncStep>& steps, std::initializer_list<SyncStep::Kind> kinds) {
  std::vector<std::string> out;
  for (auto& st : steps)
    if (std::find(kinds.begin(), kinds.end(), st.kind) != kinds.end()) out.push_back(st.id);
  return out;
}

void refuse_blocked(const std::vector<SyncStep>& steps) {
  std::vector<std::string> lines;
  for (auto& st : steps)
    if (st.kind == SyncStep::blocked) lines.push_back(st.id + ": " + st.why);
  if (lines.empty()) return;
  throw Error("sync stopped before writing anything: " + std::string(lines.size() == 1 ? "a patch" : "patches") +
              " of the set changed by someone else\n  " + util::join(lines, "\n  "));
}

std::string plan_problems(const Plan& p) {
  std::vector<std::string> lines = p.problems;
  for (auto& e : p.edits)
    if (e.state == EditState::failed) lines.push_back(e.recipe_id + ": " + e.where + ": " + e.message);
  return util::join(lines, "\n  ");
}

// The one commit that ends a sync: what it did, by kind.
std::string record(Session& s, const std::vector<SyncStep>& steps) {
  std::vector<std::string> parts;
  for (auto kind : {SyncStep::apply, SyncStep::reapply, SyncStep::replace, SyncStep::rollback, SyncStep::left_out}) {
    auto ids = ids_of(steps, {kind});
    if (!ids.empty()) parts.push_back(std::string(step_name(kind)) + " " + util::join(ids, ", "));
  }
  auto history = detail::HistoryAccess::open(s, true);
  store::Transaction tx;
  tx.message = "sync: " + util::join(parts, "; ");
  return history->commit(tx);
}

}  // namespace

SyncResult sync(Session& s, std::vector<recipe::Recipe> recipes, bool keep_others, bool write) {
  SyncResult res;
  if (!write) {
    auto lock = detail::read_lock(s);  // a write under way would look like someone else's change
    res.steps = steps_for(s, recipes, keep_others);
    return res;
  }
  auto lock = s.host.lock(detail::lock_path(s), s.lock_timeout_ms);
  std::vector<store::PatchRecord> existing;
  detail::open_cleaned(s, *lock, existing, res.notes, nullptr);
  res.steps = steps_for(s, recipes, keep_others);
  refuse_blocked(res.steps);
  if (!res.changes()) return res;

  // What is applied as it is (new, or put back after an upgrade) is planned before
  // anything is rolled back: a recipe that no longer fits fails here, with nothing written.
  auto to_apply_ids = ids_of(res.steps, {SyncStep::apply, SyncStep::reapply, SyncStep::replace});
  std::vector<recipe::Recipe> to_apply;
  for (auto& r : recipes)
    if (std::count(to_apply_ids.begin(), to_apply_ids.end(), r.id)) to_apply.push_back(r);
  auto first = ids_of(res.steps, {SyncStep::apply, SyncStep::reapply});
  if (!first.empty()) {
    std::vector<recipe::Recipe> now;
    for (auto& r : to_apply)
      if (std::count(first.begin(), first.end(), r.id)) now.push_back(r);
    Plan p = detail::plan_against(s, std::move(now), existing, false);
    if (!s.force) detail::refuse_unbound(p);
    if (!p.ok()) throw Error("sync stopped before writing anything:\n  " + plan_problems(p));
  }

  auto to_roll = ids_of(res.steps, {SyncStep::rollback, SyncStep::replace});
  if (!to_roll.empty()) {
    res.rolled = detail::rollback_locked(s, *lock, to_roll);
    res.written = res.rolled.written;
  }
  if (!to_apply.empty()) {
    auto history = detail::HistoryAccess::open(s, false, true);
    existing = history ? history->patches() : std::vector<store::PatchRecord>{};
    res.applied.plan = detail::plan_against(s, std::move(to_apply), existing);
    if (!s.force) detail::refuse_unbound(res.applied.plan);
    if (!res.applied.plan.ok()) {
      std::string done = to_roll.empty() ? "" : "\nrolled back " + util::join(to_roll, ", ") + " first (the history keeps it)";
      throw Error("sync could not apply:\n  " + plan_problems(res.applied.plan) + done,
                  to_roll.empty() ? Exit::failed : Exit::partial);
    }
    detail::refuse_shared(s, res.applied.plan);
    if (!res.applied.plan.files.empty()) {
      if (!history) history = detail::HistoryAccess::open(s, true);
      detail::write_plan(s, res.applied, existing, *history);
    } else if (!res.applied.plan.forget.empty() && history) {
      // Every edit came with the installed version (shipped patched): the old record goes.
      detail::forget_records(s, *history, existing, res.applied.plan.forget);
      res.applied.written = true;
    }
    res.written = res.written || res.applied.written;
  }
  res.commit = record(s, res.steps);
  return res;
}

}  // namespace sitepatch::engine
