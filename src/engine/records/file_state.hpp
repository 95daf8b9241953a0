#pragma once
// What became of one patched file since sitepatch wrote it: shared by verify (which
// reports it), rollback (which must not undo over a newer version) and plan (which
// reapplies after an upgrade and records the new originals).
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

/// The distribution that owned a patched file is now at another version, or gone.
struct Upgrade {
  std::string from_to;  // "flashinfer-python 0.5.3 -> 0.6.0" / "flashinfer-python 0.5.3 was uninstalled"
  bool uninstalled = false;
  /// "flashinfer-python 0.5.3 -> 0.6.0 replaced <rel>" (or "... was uninstalled; <rel> left behind")
  std::string replaced(const std::string& rel) const;
};

/// nullopt when the owner is installed at the recorded version (or `f` had no owner).
std::optional<Upgrade> upgrade_of(const store::FileRecord& f, const host::DistributionIndex& dists);

/// One line per file of `r` that an upgrade, downgrade or uninstall replaced.
std::vector<std::string> upgrades_of(const store::PatchRecord& r, const host::DistributionIndex& dists);

/// `now` without the edit that made `after` from `before`: libgit2's text merge
/// (base `after`, ours `now`, theirs `before`), and where its lines conflict, a merge by
/// statement (store::merge_units over python::statement_units): a change on the
/// statement next to the edit's is someone else's, not a change of the edit.
store::MergeResult undo_edit(const std::string& after, const std::string& now, const std::string& before,
                             const std::string& rel);

/// The state of `f` given the file as it is now (`exists`, `content`) and as sitepatch
/// last left it (`left`).
FileStatus file_state(const store::FileRecord& f, bool exists, const std::string& content,
                      const std::optional<std::string>& left, const host::DistributionIndex& dists);

}  // namespace sitepatch::engine::detail
