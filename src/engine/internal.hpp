#pragma once
// Pieces the engine's commands share; not part of the public API.
#include <string>
#include <vector>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

/// plan() against the records already in the history (apply reads them once).
Plan plan_against(Session& s, std::vector<recipe::Recipe> recipes,
                  const std::vector<store::PatchRecord>& existing);

/// Folder and name of the lock every writer takes.
std::string lock_path(const Session& s);

/// Removes the __pycache__ entries of every changed source (a .pyc checked by hash,
/// or written within the same second, would otherwise hide the edit). Returns the
/// removed paths.
std::vector<std::string> remove_bytecode(host::Host& host, const std::vector<std::string>& sources);

/// Finishes an apply that an earlier command began but did not finish (its records
/// are still "pending"): writes what is missing, commits. Returns what it did.
class HistoryAccess;
std::vector<std::string> recover(Session& s, HistoryAccess& history);

/// The records named by `ids` (all when empty); an unknown id is an error that
/// lists what is applied.
std::vector<store::PatchRecord> select(const std::vector<store::PatchRecord>& all,
                                       const std::vector<std::string>& ids);

/// Parent folder and base name of a path.
std::pair<std::string, std::string> split_path(const std::string& path);

/// "name==version", or "" when `dist` is empty.
std::string dist_label(const std::string& dist, const std::string& version);

}  // namespace sitepatch::engine::detail
