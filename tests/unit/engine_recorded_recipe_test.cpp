// A history's recipe text is read back as it was applied: a record made before format 3
// reads replace's later lines at their column, unless the text itself says otherwise.
#include <catch2/catch.hpp>

#include "engine/internal.hpp"

using sitepatch::recipe::ReplaceIndent;

TEST_CASE("recorded_recipe reads a recipe with its record's replace_indent, the recipe's own key first", "[engine]") {
  sitepatch::store::PatchRecord r;
  r.id = "p";
  r.recipe_text = "id: p\nedits:\n  - module: m\n    function: f\n    replace: {old: a, new: b}\n";
  CHECK(sitepatch::engine::detail::recorded_recipe(r, "p.yaml").edits[0].indent == ReplaceIndent::relative);
  r.replace_indent = "absolute";
  auto old = sitepatch::engine::detail::recorded_recipe(r, "p.yaml");
  CHECK(old.replace_indent == ReplaceIndent::absolute);
  CHECK(old.edits[0].indent == ReplaceIndent::absolute);
  r.recipe_text = "id: p\nreplace-indent: relative\n" + r.recipe_text.substr(6);
  CHECK(sitepatch::engine::detail::recorded_recipe(r, "p.yaml").edits[0].indent == ReplaceIndent::relative);
}
