// A rollback keeps the imports the recipes that stay asked for: recipe A added
// `import shutil`, recipe B asked for it too and found it there. Undoing A takes the
// line out; B still needs it, so it goes back in, and from then on B's record holds it
// (B's rollback takes it out).
#include "engine/internal.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::engine::detail {

std::string ensure_kept_imports(const store::PatchRecord& kept, const std::string& rel, const std::string& text) {
  if (kept.recipe_text.empty()) return text;
  std::optional<recipe::Recipe> parsed;
  try {
    parsed = recorded_recipe(kept, kept.id + ".yaml");
  } catch (const Error&) {
    return text;  // a recipe this version cannot read: the rollback's own checks stand
  }
  std::vector<recipe::Edit> imports;
  for (const recipe::Edit* e : recorded_edits_in(kept, *parsed, rel))
    if (!e->ensure_import.empty()) {
      recipe::Edit only = *e;  // the import alone, at module level
      only.action = recipe::Action::none;
      only.target.clear();
      only.kind = recipe::TargetKind::function;
      imports.push_back(std::move(only));
    }
  if (imports.empty()) return text;
  std::vector<const recipe::Edit*> edits;
  for (auto& e : imports) edits.push_back(&e);
  std::vector<python::EditResult> results;
  try {
    python::Module m(text, rel);
    return m.apply(edits, results);
  } catch (const Error&) {
    return text;
  }
}

}  // namespace sitepatch::engine::detail
