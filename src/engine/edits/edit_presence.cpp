// Whether each edit of an applied recipe is still in its file: the file's hash says the
// file is as sitepatch left it, not that every recipe's edit survived (a second recipe,
// or someone's hand edit, can replace one while the file still parses and merges).
// Asked the same way plan asks it: the edit, applied to the file as it is now, would
// change nothing.
#include <map>

#include "engine/internal.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::engine::detail {

std::vector<const recipe::Edit*> recorded_edits_in(const store::PatchRecord& r, const recipe::Recipe& parsed,
                                                   const std::string& rel) {
  std::vector<const recipe::Edit*> out;
  // Several edits can share a `where` (a module's ensure-imports, its module-level
  // replaces): the n-th record of a place is the n-th edit of it.
  std::map<std::string, int> seen;
  for (auto& er : r.edits) {
    if (er.rel != rel) continue;
    int nth = seen[er.where]++;
    for (auto& e : parsed.edits)
      if (e.where() == er.where && nth-- == 0) {
        out.push_back(&e);
        break;
      }
  }
  return out;
}

std::vector<std::string> missing_edits(const store::PatchRecord& r, const std::string& rel,
                                       const python::Module& now) {
  if (r.edits.empty() || r.recipe_text.empty()) return {};  // records from before per-edit records
  std::optional<recipe::Recipe> parsed;
  try {
    parsed = recorded_recipe(r, r.recipe_path.empty() ? r.id + ".yaml" : r.recipe_path);
  } catch (const Error&) {
    return {};  // a recipe this version cannot read: the file-level state stands
  }
  std::vector<std::string> missing;
  for (const recipe::Edit* e : recorded_edits_in(r, *parsed, rel)) {
    std::vector<python::EditResult> results;
    now.apply({e}, results);
    if (!results.empty() && results[0].outcome == python::Outcome::will_apply) missing.push_back(e->where());
  }
  return missing;
}

}  // namespace sitepatch::engine::detail
