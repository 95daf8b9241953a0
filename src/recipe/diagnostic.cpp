// Recipe problems: each one "file:line:col: message", all of them in one error.
#include <vector>

#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::recipe {

namespace {

std::string join_all(const std::vector<Diagnostic>& diagnostics) {
  std::vector<std::string> lines;
  for (const auto& d : diagnostics) lines.push_back(d.str());
  return util::join(lines, "\n");
}

}  // namespace

std::string Diagnostic::str() const {
  if (mark.line == 0) return file + ": " + message;  // about the file as a whole (unreadable, empty folder)
  return file + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column) + ": " + message;
}

RecipeError::RecipeError(std::vector<Diagnostic> diagnostics)
    : Error(join_all(diagnostics), Exit::usage), diagnostics_(std::move(diagnostics)) {}

}  // namespace sitepatch::recipe
