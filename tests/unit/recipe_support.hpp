#pragma once
// Helpers for the recipe tests: parse a YAML string and see the messages users read.
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/recipe/recipe.hpp"

namespace recipe_test {

/// Every "r.yaml:line:col: message" that parsing `yaml` reports; empty when it parses.
inline std::vector<std::string> errors_of(std::string_view yaml) {
  try {
    sitepatch::recipe::parse(yaml, "r.yaml");
  } catch (const sitepatch::recipe::RecipeError& e) {
    std::vector<std::string> out;
    for (const auto& d : e.diagnostics()) out.push_back(d.str());
    return out;
  }
  return {};
}

/// The one edit of a recipe whose `edits` list is `edit_yaml` (indented as a list item).
inline sitepatch::recipe::Edit only_edit(const std::string& edit_yaml) {
  auto r = sitepatch::recipe::parse("id: t\nedits:\n" + edit_yaml, "r.yaml");
  return r.edits.at(0);
}

}  // namespace recipe_test
