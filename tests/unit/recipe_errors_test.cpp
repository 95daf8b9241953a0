// Recipe format v1: every problem a user can make, with the exact message and position.
#include <catch2/catch.hpp>

#include "recipe_support.hpp"

using namespace sitepatch::recipe;
using recipe_test::errors_of;
using Lines = std::vector<std::string>;

// A valid recipe head; tests append one edit to it (the edit's `-` is on line 3).
static std::string with_edit(const std::string& edit) { return "id: a\nedits:\n" + edit; }

TEST_CASE("the document: empty, not YAML, not a mapping, two documents", "[recipe]") {
  CHECK(errors_of("") == Lines{"r.yaml:1:1: recipe is empty"});
  CHECK(errors_of("# only a comment\n") == Lines{"r.yaml:1:1: recipe is empty"});
  CHECK(errors_of("id: x\nedits: [1\n") ==
        Lines{"r.yaml:3:1: YAML syntax error: end of sequence flow not found"});
  CHECK(errors_of("- a\n- b\n") ==
        Lines{"r.yaml:1:1: a recipe must be a mapping with `id` and `edits`, got a list"});
  CHECK(errors_of("id: a\nedits:\n- module: m\n  ensure-import: import os\n---\nid: b\n") ==
        Lines{"r.yaml:6:1: a recipe file holds one recipe; this is a second YAML document"});
}

TEST_CASE("an unquoted @decorator gets a hint with the YAML error", "[recipe]") {
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  add-decorator: @torch.compiler.disable\n")) ==
        Lines{"r.yaml:5:18: YAML syntax error: unknown token; YAML reserves `@` at the start of a value: "
              "quote the value"});
}

TEST_CASE("a `: ` inside an unquoted value gets a hint with the YAML error", "[recipe]") {
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  replace-body: return {'a': 1}\n")) ==
        Lines{"r.yaml:5:28: YAML syntax error: illegal map value; a value holding `: ` must be quoted, or written "
              "as a block (`|` and the code on the lines below)"});
}

TEST_CASE("top-level keys: missing, unknown, duplicate, wrong shape", "[recipe]") {
  CHECK(errors_of("description: d\n") ==
        Lines{"r.yaml:1:1: missing required key `id`", "r.yaml:1:1: missing required key `edits`"});
  CHECK(errors_of("id: Flash Infer\nedits: {}\n") ==
        Lines{"r.yaml:1:5: `id` must match [a-z0-9][a-z0-9._-]*, got `Flash Infer`",
              "r.yaml:2:8: `edits` must be a list of edits, got a mapping"});
  CHECK(errors_of("id: a\nedits:\n") == Lines{"r.yaml:2:1: `edits` must be a list of edits, got nothing"});
  CHECK(errors_of("id: a\nedits: nope\n") == Lines{"r.yaml:2:8: `edits` must be a list of edits, got `nope`"});
  CHECK(errors_of("id: a\nedits: []\n") == Lines{"r.yaml:2:8: `edits` must list at least one edit"});
  CHECK(errors_of("id: a\ndescriptoin: x\nedits:\n- module: m\n  ensure-import: import os\n") ==
        Lines{"r.yaml:2:1: unknown key `descriptoin`; did you mean `description`?"});
  CHECK(errors_of("id: a\nid: b\nedits:\n- module: m\n  ensure-import: import os\n") ==
        Lines{"r.yaml:2:1: duplicate key `id`; first given at line 1"});
  CHECK(errors_of("id: a\ndescription: [x]\nedits:\n- module: m\n  ensure-import: import os\n") ==
        Lines{"r.yaml:2:14: `description` must be a string, got a list"});
  CHECK(errors_of("id: a\nzzz: 1\nedits:\n- module: m\n  ensure-import: import os\n") ==
        Lines{"r.yaml:2:1: unknown key `zzz`"});
}

TEST_CASE("requires: name and specifier, errors at the value", "[recipe]") {
  auto req = [](const std::string& value) {
    return errors_of("id: a\nrequires: " + value + "\nedits:\n- module: m\n  ensure-import: import os\n");
  };
  CHECK(req("'>=0.4'") == Lines{"r.yaml:2:11: `requires`: `>=0.4` does not start with a distribution name"});
  CHECK(req("flashinfer-python>=0.4x") ==
        Lines{"r.yaml:2:11: `requires`: `0.4x` in `>=0.4x` is not a PEP 440 version"});
  CHECK(req("flashinfer-python=>0.4") ==
        Lines{"r.yaml:2:11: `requires`: `=>0.4` does not start with an operator (==, !=, <=, >=, <, >, ~=, ===)"});
  CHECK(req("x>=1,") == Lines{"r.yaml:2:11: `requires`: empty clause in `>=1,`"});
  CHECK(req("x~=1") == Lines{"r.yaml:2:11: `requires`: `~=1` needs at least two release numbers (as in ~=1.4)"});
  CHECK(req("x>=1.*") == Lines{"r.yaml:2:11: `requires`: `.*` goes only with == and !=, not in `>=1.*`"});
  CHECK(req("x>=") == Lines{"r.yaml:2:11: `requires`: `>=` needs a version after it"});
  CHECK(req("x-[cuda]") ==
        Lines{"r.yaml:2:11: `requires`: distribution name `x-` must start and end with a letter or digit"});
  CHECK(req("\"x; python_version>'3'\"") ==
        Lines{"r.yaml:2:11: `requires`: environment markers (`;`) are not supported, in `x; python_version>'3'`"});
}

TEST_CASE("edit keys: unknown with a suggestion, misplaced, duplicate", "[recipe]") {
  // The typo also leaves the action without a target: both are reported.
  CHECK(errors_of(with_edit("- module: m\n  fucntion: f\n  replace-body: pass\n")) ==
        Lines{"r.yaml:4:3: unknown key `fucntion`; did you mean `function`?",
              "r.yaml:5:3: `replace-body` needs a target: `function`, `class` or `variable`"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  replace: {old: a, new: b}\n  count: 2\n")) ==
        Lines{"r.yaml:6:3: unknown key `count`; it goes inside `replace`"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  function: g\n  replace-body: pass\n")) ==
        Lines{"r.yaml:5:3: duplicate key `function`; first given at line 4"});
  CHECK(errors_of(with_edit("- just a string\n")) ==
        Lines{"r.yaml:3:1: edit 1 must be a mapping (module, function, action), got `just a string`"});
}

TEST_CASE("edit location: module or file, exactly one, well formed", "[recipe]") {
  CHECK(errors_of(with_edit("- function: f\n  replace-body: pass\n")) ==
        Lines{"r.yaml:3:1: edit 1 needs `module` or `file`"});
  CHECK(errors_of(with_edit("- module: m\n  file: m.py\n  function: f\n  replace-body: pass\n")) ==
        Lines{"r.yaml:3:1: edit 1 has both `module` and `file`; give one"});
  CHECK(errors_of(with_edit("- module: flashinfer/jit\n  function: f\n  replace-body: pass\n")) ==
        Lines{"r.yaml:3:11: `module` must be a dotted Python module name, got `flashinfer/jit`"});
  CHECK(errors_of(with_edit("- module: .rel\n  ensure-import: import os\n")) ==
        Lines{"r.yaml:3:11: `module` must be a dotted Python module name, got `.rel`"});

  auto file = [](const std::string& path) {
    return errors_of(with_edit("- file: '" + path + "'\n  function: f\n  replace-body: pass\n"));
  };
  CHECK(file("/etc/x.py") == Lines{"r.yaml:3:9: `file` must be relative to site-packages, got `/etc/x.py`"});
  CHECK(file("pkg/../../x.py") ==
        Lines{"r.yaml:3:9: `file` must not leave site-packages with `..`, got `pkg/../../x.py`"});
  CHECK(file("a\\b.py") == Lines{"r.yaml:3:9: `file` must use `/` between folders, got `a\\b.py`"});
  CHECK(file("a/b.txt") == Lines{"r.yaml:3:9: `file` must name a .py file, got `a/b.txt`"});
  CHECK(file("a//b.py") == Lines{"r.yaml:3:9: `file` must not have empty or `.` path parts, got `a//b.py`"});
  // A NUL would cut the path where the system reads it: named, and shown escaped.
  CHECK(errors_of(with_edit("- file: \"a\\0/b.py\"\n  function: f\n  replace-body: pass\n")) ==
        Lines{"r.yaml:3:9: `file` must not contain a NUL byte, got `a\\x00/b.py`"});
}

TEST_CASE("edit target: one of function, class, variable, a qualified name", "[recipe]") {
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  class: C\n  replace-body: pass\n")) ==
        Lines{"r.yaml:5:3: edit 1 has more than one target (`function`, `class`); give one"});
  CHECK(errors_of(with_edit("- module: m\n  function: f()\n  replace-body: pass\n")) ==
        Lines{"r.yaml:4:13: `function` must be a Python name, dotted for nesting (as in Class.method), "
              "got `f()`"});
  CHECK(errors_of(with_edit("- module: m\n  class: [C]\n  replace-body: pass\n")) ==
        Lines{"r.yaml:4:10: `class` must be a string, got a list"});
}

TEST_CASE("edit action: present, one, fitting its target", "[recipe]") {
  const std::string actions =
      "replace-body, prepend-body, add-decorator, remove-decorator, replace-function, replace, set-value, "
      "insert-after, insert-before, replace-module, register-custom-op or ensure-import";
  CHECK(errors_of(with_edit("- module: m\n")) == Lines{"r.yaml:3:1: edit 1 has no action; give one of " + actions});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n")) ==
        Lines{"r.yaml:3:1: edit 1 names a function but no action; give one of " + actions});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  replace-body: pass\n  add-decorator: d\n")) ==
        Lines{"r.yaml:6:3: edit 1 has more than one action (`replace-body`, `add-decorator`); give one per edit"});
  CHECK(errors_of(with_edit("- module: m\n  replace-body: pass\n")) ==
        Lines{"r.yaml:4:3: `replace-body` needs a target: `function`, `class` or `variable`"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  set-value: '1'\n")) ==
        Lines{"r.yaml:5:3: `set-value` works on a `variable`, not a `function`"});
  CHECK(errors_of(with_edit("- module: m\n  class: C\n  set-value: '1'\n")) ==
        Lines{"r.yaml:5:3: `set-value` works on a `variable`, not a `class`"});
  for (const char* a : {"replace-body", "prepend-body", "add-decorator", "remove-decorator", "replace-function"})
    CHECK(errors_of(with_edit(std::string("- module: m\n  variable: V\n  ") + a + ": x\n")) ==
          Lines{std::string("r.yaml:5:3: `") + a + "` works on a `function` or `class`, not a `variable`"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  replace-body:\n")) ==
        Lines{"r.yaml:5:3: `replace-body` needs a value"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  prepend-body: '   '\n")) ==
        Lines{"r.yaml:5:17: `prepend-body` needs a value"});
}

TEST_CASE("decorators and position", "[recipe]") {
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  add-decorator: \"@\"\n")) ==
        Lines{"r.yaml:5:18: `add-decorator` needs a value"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  remove-decorator: \"a\\nb\"\n")) ==
        Lines{"r.yaml:5:21: `remove-decorator` must be one decorator on one line, got `a...`"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  position: top\n  add-decorator: d\n")) ==
        Lines{"r.yaml:5:13: `position` must be `outermost` or `innermost`, got `top`"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  position: innermost\n  remove-decorator: d\n")) ==
        Lines{"r.yaml:5:3: `position` goes only with `add-decorator`"});
}

TEST_CASE("replace: a mapping of old, new, count", "[recipe]") {
  auto rep = [](const std::string& value) {
    return errors_of(with_edit("- module: m\n  function: f\n  replace: " + value + "\n"));
  };
  CHECK(rep("{old: a, new: b, count: two}") == Lines{"r.yaml:5:36: `count` must be an integer >= 1, got `two`"});
  CHECK(rep("{old: a, new: b, count: 0}") == Lines{"r.yaml:5:36: `count` must be an integer >= 1, got `0`"});
  CHECK(rep("{old: a, new: b, count: -1}") == Lines{"r.yaml:5:36: `count` must be an integer >= 1, got `-1`"});
  CHECK(rep("{old: a}") == Lines{"r.yaml:5:12: `replace` needs `new`"});
  CHECK(rep("{new: a}") == Lines{"r.yaml:5:12: `replace` needs `old`"});
  CHECK(rep("{old: a, new: a}") == Lines{"r.yaml:5:12: `replace` has the same `old` and `new`"});
  CHECK(rep("{old: '', new:}") ==
        Lines{"r.yaml:5:18: `old` must not be empty",
              "r.yaml:5:22: `new` needs a value (write `new: \"\"` to delete `old`)"});
  CHECK(rep("{old: a, nwe: b}") ==
        Lines{"r.yaml:5:12: `replace` needs `new`", "r.yaml:5:21: unknown key `nwe`; did you mean `new`?"});
  CHECK(rep("a -> b") ==
        Lines{"r.yaml:5:12: `replace` must be a mapping with `old`, `new` and optional `count`, got `a -> b`"});
}

TEST_CASE("ensure-import and occurrence", "[recipe]") {
  CHECK(errors_of(with_edit("- module: m\n  ensure-import: torch\n")) ==
        Lines{"r.yaml:4:18: `ensure-import` must be one import statement (`import x` or `from x import y`), "
              "got `torch`"});
  CHECK(errors_of(with_edit("- module: m\n  ensure-import: from torch\n")) ==
        Lines{"r.yaml:4:18: `ensure-import` must be one import statement (`import x` or `from x import y`), "
              "got `from torch`"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  occurrence: first\n  replace-body: pass\n")) ==
        Lines{"r.yaml:5:15: `occurrence` must be an integer >= 1, got `first`"});
  CHECK(errors_of(with_edit("- module: m\n  occurrence: 1\n  ensure-import: import os\n")) ==
        Lines{"r.yaml:4:3: `occurrence` needs a target: `function`, `class` or `variable`"});
}

TEST_CASE("every problem is reported, in file order, in one error", "[recipe]") {
  // Three bad edits and a bad id give four diagnostics, not one.
  const std::string yaml =
      "id: Bad\n"
      "edits:\n"
      "  - module: m\n"
      "    fucntion: f\n"
      "    ensure-import: import os\n"
      "  - file: /abs.py\n"
      "    function: f\n"
      "    replace-body: pass\n"
      "  - module: m\n"
      "    function: f\n"
      "    replace: {old: a, new: b, count: two}\n";
  try {
    parse(yaml, "r.yaml");
    FAIL("parse accepted an invalid recipe");
  } catch (const RecipeError& e) {
    const Lines expected = {
        "r.yaml:1:5: `id` must match [a-z0-9][a-z0-9._-]*, got `Bad`",
        "r.yaml:4:5: unknown key `fucntion`; did you mean `function`?",
        "r.yaml:6:11: `file` must be relative to site-packages, got `/abs.py`",
        "r.yaml:11:38: `count` must be an integer >= 1, got `two`",
    };
    Lines got;
    for (const auto& d : e.diagnostics()) got.push_back(d.str());
    CHECK(got == expected);
    // what() is the same lines joined, and the exit code says "bad usage".
    CHECK(std::string(e.what()) ==
          expected[0] + "\n" + expected[1] + "\n" + expected[2] + "\n" + expected[3]);
    CHECK(e.code() == sitepatch::Exit::usage);
    CHECK(e.diagnostics()[1].file == "r.yaml");
    CHECK(e.diagnostics()[1].mark.line == 4);
    CHECK(e.diagnostics()[1].mark.column == 5);
  }
}

TEST_CASE("on-upgrade takes one of three words", "[recipe]") {
  CHECK(errors_of("id: a\non-upgrade: ignore\nedits:\n- module: m\n  ensure-import: import os\n") ==
        Lines{"r.yaml:2:13: `on-upgrade` must be reapply, warn or fail, got `ignore`"});
  CHECK(errors_of("id: a\non_upgrade: warn\nedits:\n- module: m\n  ensure-import: import os\n") ==
        Lines{"r.yaml:2:1: unknown key `on_upgrade`; did you mean `on-upgrade`?"});
}

TEST_CASE("replace-indent takes relative or absolute", "[recipe]") {
  CHECK(errors_of("id: a\nreplace-indent: 4\nedits:\n- module: m\n  ensure-import: import os\n") ==
        Lines{"r.yaml:2:17: `replace-indent` must be relative or absolute, got `4`"});
}

TEST_CASE("a stray flow token is a syntax error, never an endless parse", "[recipe]") {
  // yaml-cpp 0.7's LoadAll loops forever, allocating, on each of these (issue 10, #13).
  CHECK(errors_of(",") == Lines{"r.yaml:1:1: YAML syntax error: unexpected `,`"});
  CHECK(errors_of("\n,\n") == Lines{"r.yaml:2:1: YAML syntax error: unexpected `,`"});
  CHECK(errors_of("---\n,\n") == Lines{"r.yaml:2:1: YAML syntax error: unexpected `,`"});
  CHECK(errors_of("id: a\n---\n,\n") == Lines{"r.yaml:3:1: YAML syntax error: unexpected `,`"});
  // yaml-cpp itself names the others.
  CHECK(errors_of("]") == Lines{"r.yaml:1:1: YAML syntax error: illegal flow end"});
  CHECK(errors_of(with_edit("- module: m\n  ensure-import: import os\n,\n")) ==
        Lines{"r.yaml:5:1: YAML syntax error: end of map not found"});
}

TEST_CASE("a recipe must be UTF-8: the first other byte is named with its position", "[recipe]") {
  CHECK(errors_of("id: a\ndescription: caf\xE9 cr\xE8me\nedits: []\n") ==
        Lines{"r.yaml:2:17: not UTF-8: byte 0xE9 (a recipe must be UTF-8 text)"});
  // Columns count characters: the `é` before the bad byte is one.
  CHECK(errors_of("id: a\ndescription: \xC3\xA9\xFF\n") ==
        Lines{"r.yaml:2:15: not UTF-8: byte 0xFF (a recipe must be UTF-8 text)"});
  // Overlong forms and surrogates are not UTF-8 either.
  CHECK(errors_of("id: \xC0\xAF\n") == Lines{"r.yaml:1:5: not UTF-8: byte 0xC0 (a recipe must be UTF-8 text)"});
  CHECK(errors_of("id: \xED\xA0\x80\n") == Lines{"r.yaml:1:5: not UTF-8: byte 0xED (a recipe must be UTF-8 text)"});
}

TEST_CASE("a very long value is checked without overflowing the stack", "[recipe]") {
  // std::regex recursed once per character: a 5 MB `id` crashed with SIGSEGV.
  std::string huge(5'000'000, 'x');
  CHECK(errors_of("id: " + huge + "\n") == Lines{"r.yaml:1:1: missing required key `edits`"});
  auto errors = errors_of("id: a\nrequires: foo>=" + huge + "\n");
  REQUIRE(errors.size() == 2);
  CHECK(errors[1].rfind("r.yaml:2:11: `requires`: ", 0) == 0);
}

TEST_CASE("nesting too deep is named as such, not as yaml-cpp's `bad file`", "[recipe]") {
  CHECK(errors_of(std::string(100000, '[')) ==
        Lines{"r.yaml:1:1: YAML syntax error: nested more than 499 levels deep"});
}

TEST_CASE("anchor: only with insert-before or insert-after, in a function, and insert-before needs one", "[recipe]") {
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  insert-before: x = 1\n")) ==
        Lines{"r.yaml:5:3: `insert-before` needs `anchor`: the statement of the function's body the code goes above"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  replace-body: pass\n  anchor: return x\n")) ==
        Lines{"r.yaml:6:3: `anchor` goes only with `insert-before` or `insert-after`"});
  CHECK(errors_of(with_edit("- module: m\n  class: C\n  insert-after: x = 1\n  anchor: y = 2\n")) ==
        Lines{"r.yaml:6:3: `anchor` is a statement of a function's body: it works on a `function`, not a `class`"});
  CHECK(errors_of(with_edit("- module: m\n  variable: V\n  insert-before: x = 1\n  anchor: y = 2\n")) ==
        Lines{"r.yaml:6:3: `anchor` is a statement of a function's body: it works on a `function`, not a `variable`"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  insert-before: x = 1\n  anchor:\n")) ==
        Lines{"r.yaml:6:3: `anchor` needs a value"});
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  insert-before: x = 1\n  anchor: [a]\n")) ==
        Lines{"r.yaml:6:11: `anchor` must be a string, got a list"});
  CHECK(errors_of(with_edit("- module: m\n  anchor: x = 1\n  ensure-import: import os\n")) ==
        Lines{"r.yaml:4:3: `anchor` goes only with `insert-before` or `insert-after`"});
}

TEST_CASE("replace-module takes no target and no ensure-import", "[recipe]") {
  CHECK(errors_of(with_edit("- module: m\n  function: f\n  replace-module: x = 1\n")) ==
        Lines{"r.yaml:4:3: `replace-module` replaces the whole module: it takes no `function`"});
  CHECK(errors_of(with_edit("- module: m\n  replace-module: x = 1\n  ensure-import: import os\n")) ==
        Lines{"r.yaml:5:3: `replace-module` gives the whole text: put the import in it, not in `ensure-import`"});
  CHECK(errors_of(with_edit("- module: m\n  replace-module: x = 1\n")).empty());
}
