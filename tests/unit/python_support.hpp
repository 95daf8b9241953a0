#pragma once
// Helpers for the python module's tests: build edits, apply them, re-apply to the result.
#include <string>
#include <vector>

#include "sitepatch/python/module.hpp"
#include "sitepatch/recipe/recipe.hpp"

namespace pytest {

using sitepatch::python::EditResult;
using sitepatch::python::Failure;
using sitepatch::python::Module;
using sitepatch::python::Outcome;
using sitepatch::recipe::Action;
using sitepatch::recipe::Edit;
using sitepatch::recipe::TargetKind;

inline Edit edit(Action action, std::string target, std::string code = "",
                 TargetKind kind = TargetKind::function) {
  Edit e;
  e.action = action;
  e.target = std::move(target);
  e.code = std::move(code);
  e.kind = kind;
  return e;
}

inline Edit import_edit(std::string statement) {
  Edit e;
  e.action = Action::none;
  e.ensure_import = std::move(statement);
  return e;
}

struct Run {
  std::string out;
  std::vector<EditResult> results;
};

/// Applies `edits` (in order) to `source`.
inline Run run(const std::string& source, const std::vector<Edit>& edits) {
  Module m(source);
  std::vector<const Edit*> ptrs;
  for (const auto& e : edits) ptrs.push_back(&e);
  Run r;
  r.out = m.apply(ptrs, r.results);
  return r;
}

/// Applying `edits` again to `patched` changes nothing and reports every edit already applied.
inline bool idempotent(const std::string& patched, const std::vector<Edit>& edits) {
  Run again = run(patched, edits);
  if (again.out != patched) return false;
  for (const auto& r : again.results)
    if (r.outcome != Outcome::already_applied) return false;
  return true;
}

}  // namespace pytest
