// The warning users read about names new code uses that nothing binds, and apply's
// refusal of them.
#include <catch2/catch.hpp>

#include "engine/edits/unbound.hpp"

using namespace sitepatch;

namespace {

engine::Plan one_edit() {
  engine::Plan p;
  engine::EditStatus st;
  st.recipe_path = "r.yaml";
  st.recipe_line = 3;
  st.recipe_column = 3;
  p.edits.push_back(st);
  return p;
}

}  // namespace

TEST_CASE("the warning names the names, the edit and the remedy", "[engine]") {
  engine::Plan p = one_edit();
  engine::detail::note_unbound(p, "pkg/mod.py", {{0, {{"torch", 10, false}, {"np", 20, false}}}});
  CHECK(p.edits[0].unbound == std::vector<std::string>{"torch", "np"});
  CHECK(p.edits[0].warning ==
        "uses `torch`, `np`, which pkg/mod.py never binds (no import, definition or assignment) and are not "
        "builtins: add `ensure-import: import torch` (or the import that binds it) to the edit at r.yaml:3");
  CHECK(p.edits[0].state == engine::EditState::will_apply);  // plan only warns
  engine::detail::refuse_unbound(p);
  CHECK(p.edits[0].state == engine::EditState::failed);
  CHECK(p.edits[0].message == p.edits[0].warning + "; or apply --force to write it anyway");
}

TEST_CASE("a class attribute used bare gets its own remedy", "[engine]") {
  engine::Plan p = one_edit();
  engine::detail::note_unbound(p, "pkg/mod.py", {{0, {{"limit", 10, true}}}});
  CHECK(p.edits[0].warning ==
        "uses `limit` bare, but it is bound in a class body, which a method does not see: write `self.limit` "
        "(or the class's name and a dot) in the edit at r.yaml:3");
}

TEST_CASE("the modules an ensure-import statement imports, top level only", "[engine]") {
  using engine::detail::imported_modules;
  CHECK(imported_modules("import torch") == std::vector<std::string>{"torch"});
  CHECK(imported_modules("import torch.nn as nn, os") == std::vector<std::string>{"torch", "os"});
  CHECK(imported_modules("from a.b import C  # why") == std::vector<std::string>{"a"});
  CHECK(imported_modules("from . import sibling").empty());
  CHECK(imported_modules("import os\nfrom json import loads") == std::vector<std::string>{"os", "json"});
}

TEST_CASE("a conventional alias gets the import that binds it, not a module named like it", "[engine]") {
  engine::Plan p = one_edit();
  engine::detail::note_unbound(p, "pkg/mod.py", {{0, {{"np", 10, false}}}});
  CHECK(p.edits[0].warning ==
        "uses `np`, which pkg/mod.py never binds (no import, definition or assignment) and is not a builtin: add "
        "`ensure-import: import numpy as np` (or the import that binds it) to the edit at r.yaml:3");
}
