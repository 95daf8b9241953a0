#pragma once
// Checks of a recipe's Python that need no target file, made when the recipe is loaded
// so that a bad value is a recipe error (exit 2) with its position in the recipe.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::python {

/// A problem in a snippet of code, at its 1-based line and column.
struct CodeProblem {
  int line = 1;
  int column = 1;
  std::string message;
};

/// Why `code` is not exactly one Python expression (what `eval` takes: comments and
/// blank lines are fine, a statement, a second expression or trailing code are not).
std::optional<CodeProblem> expression_problem(std::string_view code);

/// Every problem of that kind in `r`, placed in the recipe file: each `set-value` must
/// be one expression.
std::vector<recipe::Diagnostic> check_recipe(const recipe::Recipe& r);

}  // namespace sitepatch::python
