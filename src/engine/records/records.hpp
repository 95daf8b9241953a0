#pragma once
// How an apply becomes history records: one PatchRecord per recipe, each file's
// before and after as that recipe saw it.
#include <map>
#include <string>
#include <vector>

#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

/// Records for every recipe that changes a file in `plan`, in state `state`.
/// A recipe applied before keeps its first `before` of each file (the original),
/// unless an upgrade replaced that file since: then the new version's file is the
/// original, and files of the old version it no longer patches are dropped.
std::vector<store::PatchRecord> records_for(const Plan& plan,
                                            const std::vector<store::PatchRecord>& existing,
                                            const host::DistributionIndex& dists,
                                            const std::string& state, int64_t now);

/// site/ entries no record refers to once `put` replaces its namesakes in `existing`
/// (files an upgrade took out of a record), and `dropped` records are gone.
std::vector<std::string> unreferenced(const std::vector<store::PatchRecord>& existing,
                                      const std::vector<store::PatchRecord>& put,
                                      const std::vector<std::string>& dropped = {});

/// Trailers naming each recipe, its hash and the distributions it touched.
std::vector<std::pair<std::string, std::string>> trailers_for(
    const std::vector<store::PatchRecord>& records);

/// "a, b" of the records' ids.
std::string ids_of(const std::vector<store::PatchRecord>& records);

}  // namespace sitepatch::engine::detail
