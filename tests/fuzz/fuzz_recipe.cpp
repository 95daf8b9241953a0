// Fuzz target: recipe text -> a Recipe or a RecipeError (exit 2 with file:line:col).
// Anything else (a crash, a hang, another exception, a diagnostic without a
// position) is a finding.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sitepatch/recipe/recipe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto r = sitepatch::recipe::parse(text, "fuzz.yaml");
    if (r.edits.empty()) std::abort();  // a recipe always has at least one edit
  } catch (const sitepatch::recipe::RecipeError& e) {
    for (const auto& d : e.diagnostics())
      if (d.mark.line < 1 || d.mark.column < 1 || d.message.empty()) std::abort();
  }
  return 0;
}
