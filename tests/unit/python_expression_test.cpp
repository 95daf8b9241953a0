// set-value takes exactly one expression: statements, a second expression or trailing
// code are refused when the recipe loads, at their position in the recipe file.
#include <catch2/catch.hpp>

#include "sitepatch/python/check.hpp"
#include "unit/python_support.hpp"

using namespace sitepatch;
using Lines = std::vector<std::string>;

namespace {

// The check_recipe messages for a recipe whose one edit sets `m:X` with `value_yaml`
// (the text after `set-value:`, the key on line 5).
Lines problems_of(const std::string& value_yaml) {
  std::string text = "id: a\nedits:\n- module: m\n  variable: X\n  set-value:" + value_yaml;
  Lines out;
  for (const auto& d : python::check_recipe(recipe::parse(text, "r.yaml"))) out.push_back(d.str());
  return out;
}

}  // namespace

TEST_CASE("set-value accepts one expression, over lines and with comments", "[python][expression]") {
  CHECK(problems_of(" 1\n").empty());
  CHECK(problems_of(" \"1, 2\"\n").empty());  // a tuple, as `eval` takes it
  CHECK(problems_of(" |\n    {\n      'a': 1,  # why\n    }\n    # trailing comment\n").empty());
  CHECK(problems_of(" '(y := 3)'\n").empty());
  CHECK(problems_of(" \"lambda x: x + 1\"\n").empty());
}

TEST_CASE("set-value refuses a statement after the expression, where it is", "[python][expression]") {
  CHECK(problems_of(" \"1\\nprint('x')\"\n") ==
        Lines{"r.yaml:5:15: `set-value` must be one Python expression; a second statement follows it: "
              "`print('x')`"});
  CHECK(problems_of(" |\n    1\n    import os; os.system('id')\n") ==
        Lines{"r.yaml:7:5: `set-value` must be one Python expression; a second statement follows it: "
              "`import os`"});
  CHECK(problems_of(" '1; 2'\n") ==
        Lines{"r.yaml:5:18: `set-value` must be one Python expression; a second statement follows it: `2`"});
}

TEST_CASE("set-value refuses statements, assignments and what does not parse", "[python][expression]") {
  CHECK(problems_of(" 'y = 2'\n") ==
        Lines{"r.yaml:5:15: `set-value` must be one Python expression, not an assignment: `y = 2`"});
  CHECK(problems_of(" |\n    import os\n") ==
        Lines{"r.yaml:6:5: `set-value` must be one Python expression, not a statement: `import os`"});
  CHECK(problems_of(" '1 +'\n") ==
        Lines{"r.yaml:5:15: `set-value` must be one Python expression; it does not parse at `1 +`"});
}

TEST_CASE("the edit engine refuses a set-value statement too", "[python][expression]") {
  // For callers that did not load the recipe through check_recipe.
  auto e = pytest::edit(recipe::Action::set_value, "X", "1\nprint('x')", recipe::TargetKind::variable);
  pytest::Run r = pytest::run("X = 0\n", {e});
  CHECK(r.results[0].outcome == python::Outcome::failed);
  CHECK(r.results[0].message ==
        "`set-value` must be one Python expression; a second statement follows it: `print('x')` "
        "(line 2 of the value)");
  CHECK(r.out == "X = 0\n");
}
