#pragma once
// What explain prints: each break (the operation, the user's frame, the library
// chain, the fix and its cost, what the fix leaves), as text or JSON, and the recipe
// the fixes make. Private to src/cli.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "context.hpp"
#include "sitepatch/engine/explain.hpp"
#include "sitepatch/engine/explain_run.hpp"

namespace sitepatch::cli {

/// The recipe the fixes make, ready for `plan`; "" when there is no fix.
std::string explain_recipe(const engine::Explanation& e, const std::vector<std::string>& logs);

/// `dist>=version,<next minor` for a recipe's `requires:`; "" unless `dist` is a PEP 508
/// name and `version` a PEP 440 version (both come from METADATA others may write).
std::string proposed_requires(const std::string& dist, const std::string& version);

/// Every break, as text.
void print_explanation(const Output& out, const engine::Explanation& e, int verbose);

/// Each walk from the user's code, its chains as their state says.
void print_user_walks(const Output& out, const std::vector<engine::UserWalk>& walks, int verbose);

/// The --json document's breaks and fixes.
nlohmann::json explanation_json(const engine::Explanation& e);

/// A break placed by path alone (no environment), as text: for logs with no break inside a library.
void print_outside(const Output& out, const std::vector<engine::LoggedBreak>& breaks);
nlohmann::json outside_json(const std::vector<engine::LoggedBreak>& breaks);

/// explain --run: whether the last kept run (the first when none was kept) still failed.
bool still_fails(const engine::ProvenFixes& p);
/// explain --run: one run as a progress line ("run 2: + assume_constant_result on ...").
std::string run_line(size_t n, const engine::TriedRun& t);
/// The recipe of the kept fixes, each edit commented with what its run measured; "" for none.
std::string run_recipe(const engine::ProvenFixes& p, const std::string& command);
/// The before/after table, the fixes kept and the recipe (or where it was written).
void print_run(const Output& out, const engine::ProvenFixes& p, const std::string& recipe, const std::string& file,
               int verbose);
nlohmann::json run_json(const engine::ProvenFixes& p, const std::string& recipe);

}  // namespace sitepatch::cli
