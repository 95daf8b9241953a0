#pragma once
// sitepatch sync: the environment ends with exactly a declared set of recipes applied
// (a project's patches/ folder): what is missing applied, what an upgrade or a reinstall
// took away put back, a recipe whose content changed under the same id applied as the
// new content, applied recipes outside the set rolled back; one lock for all of it.
#include <string>
#include <vector>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine {

struct SyncStep {
  enum Kind {
    in_sync,   // applied as the set has it
    apply,     // not applied
    reapply,   // applied, but an upgrade or a reinstall took its edits away
    replace,   // applied from another content under the same id: rolled back, then applied as it is now
    rollback,  // applied, not in the set
    left_out,  // in the set, but its requires: excludes the installed version (or its package is gone)
    blocked,   // applied, in files someone else changed since: sync stops before writing
  } kind = in_sync;
  std::string id;
  std::string why;     // "not applied", "flashinfer-python 0.5.3 -> 0.6.0 took its edits away", ...
  std::string recipe;  // the recipe file of the set ("" for a rollback)
};
std::string_view step_name(SyncStep::Kind k);  // "in sync", "apply", ..., "left out", "blocked"

struct SyncResult {
  std::vector<SyncStep> steps;  // one per id of the set and per applied id outside it, in id order
  RollbackResult rolled;        // what the rollback part did
  ApplyResult applied;          // what the apply part did
  bool written = false;
  std::string commit;           // the final record ("sync: ..."), "" when nothing was written
  std::vector<std::string> notes;  // an interrupted command finished first, ...
  /// Whether anything is to be written (left out and in-sync steps need nothing).
  bool changes() const;
  bool any(SyncStep::Kind k) const;
};

/// The steps that bring the environment to `recipes` (all applied, nothing else unless
/// `keep_others`), and with `write` those steps done under one lock: rollbacks first
/// (those outside the set, and the old content of a replaced one), then one apply of the
/// rest, then one commit that records the sync. Throws, before anything is written, when
/// a patch of the set is blocked (changed by someone else: the message names the fix)
/// or when the applies would fail (the plan's problems).
SyncResult sync(Session& s, std::vector<recipe::Recipe> recipes, bool keep_others, bool write);

}  // namespace sitepatch::engine
