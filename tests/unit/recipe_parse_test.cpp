// Recipe format v1: what a valid recipe parses to.
#include <catch2/catch.hpp>

#include <ctime>

#include "recipe_support.hpp"
#include "sitepatch/util/hash.hpp"

using namespace sitepatch::recipe;
using recipe_test::only_edit;

TEST_CASE("the founding example parses to exactly its fields", "[recipe]") {
  const std::string yaml =
      "id: flashinfer-dynamo            # required\n"
      "description: Let torch.compile trace FlashInfer's FP4 path\n"
      "requires: flashinfer-python>=0.4,<0.7\n"
      "edits:\n"
      "  - module: flashinfer.jit.cpp_ext\n"
      "    function: get_cuda_version\n"
      "    replace-body: |\n"
      "      return Version(torch.version.cuda)\n"
      "  - module: flashinfer.fp4_quantization\n"
      "    function: fp4_quantize\n"
      "    add-decorator: torch.compiler.disable\n"
      "    ensure-import: import torch\n";
  Recipe r = parse(yaml, "recipes/flashinfer.yaml");

  CHECK(r.path == "recipes/flashinfer.yaml");
  CHECK(r.text == yaml);
  CHECK(r.hash == sitepatch::util::sha256_hex(yaml));
  CHECK(r.id == "flashinfer-dynamo");
  CHECK(r.description == "Let torch.compile trace FlashInfer's FP4 path");
  REQUIRE(r.requires.size() == 1);
  CHECK(r.requires[0].name == "flashinfer-python");
  CHECK(r.requires[0].specifier == ">=0.4,<0.7");
  REQUIRE(r.requires[0].clauses.size() == 2);
  CHECK(r.requires[0].clauses[0].op == ">=");
  CHECK(r.requires[0].clauses[0].version == "0.4");
  CHECK(r.requires[0].clauses[1].op == "<");
  CHECK(r.requires[0].clauses[1].version == "0.7");
  REQUIRE(r.edits.size() == 2);

  const Edit& a = r.edits[0];
  CHECK(a.mark.line == 5);
  CHECK(a.mark.column == 3);  // the `-`
  CHECK(a.module == "flashinfer.jit.cpp_ext");
  CHECK(a.file.empty());
  CHECK(a.kind == TargetKind::function);
  CHECK(a.target == "get_cuda_version");
  CHECK(a.action == Action::replace_body);
  CHECK(a.code == "return Version(torch.version.cuda)\n");  // as YAML gives it
  CHECK(a.ensure_import.empty());
  CHECK(a.occurrence == 0);
  CHECK(a.where() == "flashinfer.jit.cpp_ext:get_cuda_version");

  const Edit& b = r.edits[1];
  CHECK(b.mark.line == 9);
  CHECK(b.mark.column == 3);
  CHECK(b.module == "flashinfer.fp4_quantization");
  CHECK(b.target == "fp4_quantize");
  CHECK(b.action == Action::add_decorator);
  CHECK(b.code == "torch.compiler.disable");
  CHECK_FALSE(b.innermost);
  CHECK(b.ensure_import == "import torch");
  CHECK(b.where() == "flashinfer.fp4_quantization:fp4_quantize");
}

TEST_CASE("description and requires are optional, requires may be a name alone", "[recipe]") {
  Recipe r = parse("id: a\nedits:\n- module: m\n  ensure-import: import os\n", "r.yaml");
  CHECK(r.description.empty());
  CHECK(r.requires.empty());

  r = parse("id: a\nrequires: Flash_Infer.Python\nedits:\n- module: m\n  ensure-import: import os\n", "r.yaml");
  REQUIRE(r.requires.size() == 1);
  CHECK(r.requires[0].name == "Flash_Infer.Python");
  CHECK(r.requires[0].specifier.empty());
  CHECK(r.requires[0].clauses.empty());
}

TEST_CASE("requires drops extras and allows spaces", "[recipe]") {
  Recipe r = parse("id: a\nrequires: torch[cuda] >= 2.1, != 2.2.0\nedits:\n- module: m\n  ensure-import: import os\n",
                   "r.yaml");
  REQUIRE(r.requires.size() == 1);
  CHECK(r.requires[0].name == "torch");
  CHECK(r.requires[0].specifier == ">= 2.1, != 2.2.0");
  REQUIRE(r.requires[0].clauses.size() == 2);
  CHECK(r.requires[0].clauses[1].op == "!=");
  CHECK(r.requires[0].clauses[1].version == "2.2.0");
}

TEST_CASE("requires may be a list, each item one requirement", "[recipe]") {
  Recipe r = parse("id: a\nrequires:\n  - flashinfer-python>=0.5\n  - torch>=2.1\nedits:\n- module: m\n"
                   "  ensure-import: import os\n",
                   "r.yaml");
  REQUIRE(r.requires.size() == 2);
  CHECK(r.requires[0].name == "flashinfer-python");
  CHECK(r.requires[1].name == "torch");
  CHECK(r.requires[1].specifier == ">=2.1");
  try {
    parse("id: a\nrequires:\n  - torch>=2.1\n  - {a: 1}\n  - 'x >= nope'\nedits:\n- module: m\n"
          "  ensure-import: import os\n",
          "r.yaml");
    FAIL("parsed");
  } catch (const RecipeError& e) {
    std::string what = e.what();
    CHECK(what.find("r.yaml:4:5: `requires`: each item must be one requirement, such as torch>=2.1") != std::string::npos);
    CHECK(what.find("r.yaml:5:5: `requires`: ") != std::string::npos);
  }
  try {
    parse("id: a\nrequires: []\nedits:\n- module: m\n  ensure-import: import os\n", "r.yaml");
    FAIL("parsed");
  } catch (const RecipeError& e) {
    CHECK(std::string(e.what()).find("r.yaml:2:11: `requires`: an empty list") != std::string::npos);
  }
}

TEST_CASE("every action parses into its fields", "[recipe]") {
  SECTION("replace-body") {
    Edit e = only_edit("- module: m\n  function: C.f\n  replace-body: |\n    x = 1\n    return x\n");
    CHECK(e.action == Action::replace_body);
    CHECK(e.code == "x = 1\nreturn x\n");
    CHECK(e.where() == "m:C.f");
  }
  SECTION("prepend-body") {
    Edit e = only_edit("- module: m\n  function: outer.inner\n  prepend-body: \"import torch\\n\"\n");
    CHECK(e.action == Action::prepend_body);
    CHECK(e.code == "import torch\n");
    CHECK(e.target == "outer.inner");
  }
  SECTION("add-decorator, innermost, a leading @ dropped") {
    Edit e = only_edit("- module: m\n  function: f\n  add-decorator: '@functools.cache'\n  position: innermost\n");
    CHECK(e.action == Action::add_decorator);
    CHECK(e.code == "functools.cache");
    CHECK(e.innermost);
  }
  SECTION("add-decorator, position outermost") {
    Edit e = only_edit("- module: m\n  class: K\n  add-decorator: dataclass(frozen=True)\n  position: outermost\n");
    CHECK(e.kind == TargetKind::class_);
    CHECK(e.code == "dataclass(frozen=True)");
    CHECK_FALSE(e.innermost);
  }
  SECTION("remove-decorator") {
    Edit e = only_edit("- module: m\n  function: f\n  remove-decorator: torch.jit.script\n");
    CHECK(e.action == Action::remove_decorator);
    CHECK(e.code == "torch.jit.script");
  }
  SECTION("replace-function") {
    Edit e = only_edit("- module: m\n  function: f\n  replace-function: |\n    def f():\n        return 1\n");
    CHECK(e.action == Action::replace_function);
    CHECK(e.code == "def f():\n    return 1\n");
  }
  SECTION("replace, count defaults to 1") {
    Edit e = only_edit("- module: m\n  function: f\n  replace: {old: subprocess.run, new: _run}\n");
    CHECK(e.action == Action::replace);
    CHECK(e.old_text == "subprocess.run");
    CHECK(e.new_text == "_run");
    CHECK(e.count == 1);
  }
  SECTION("replace with no target: the module's own lines") {
    Edit e = only_edit("- module: m\n  replace: {old: 'TIMEOUT = 30', new: 'TIMEOUT = 60'}\n");
    CHECK(e.action == Action::replace);
    CHECK(e.target.empty());
    CHECK(e.old_text == "TIMEOUT = 30");
    CHECK(e.where() == "m");
  }
  SECTION("replace with count, and an empty new") {
    Edit e = only_edit("- module: m\n  function: f\n  replace:\n    old: \"  # noqa\"\n    new: \"\"\n    count: 3\n");
    CHECK(e.old_text == "  # noqa");
    CHECK(e.new_text.empty());
    CHECK(e.count == 3);
  }
  SECTION("register-custom-op, with its name and schema, written back as read") {
    Edit e = only_edit("- module: kern.ops\n  function: quantize\n  register-custom-op: |\n    return torch.empty_like(x)\n"
                       "  op-name: kern::quant\n  op-schema: (Tensor x, int n=4) -> Tensor\n");
    CHECK(e.action == Action::register_custom_op);
    CHECK(e.code == "return torch.empty_like(x)\n");
    CHECK(e.op_name == "kern::quant");
    CHECK(e.op_schema == "(Tensor x, int n=4) -> Tensor");
    CHECK(sitepatch::recipe::edit_yaml(e) ==
          "  - module: kern.ops\n    function: quantize\n    register-custom-op: |\n      return torch.empty_like(x)\n"
          "    op-name: kern::quant\n    op-schema: (Tensor x, int n=4) -> Tensor\n");
  }
  SECTION("insert-before and insert-after with an anchor, trimmed, written back as read") {
    Edit e = only_edit("- module: m\n  function: C.send\n  insert-before: |\n    timeout_set = True\n"
                       "  anchor: \"  timeout = Sauce(timeout)  \"\n");
    CHECK(e.action == Action::insert_before);
    CHECK(e.code == "timeout_set = True\n");
    CHECK(e.anchor == "timeout = Sauce(timeout)");
    CHECK(sitepatch::recipe::edit_yaml(e) == "  - module: m\n    function: C.send\n    insert-before: |\n"
                                             "      timeout_set = True\n    anchor: timeout = Sauce(timeout)\n");
    Edit a = only_edit("- module: m\n  function: f\n  insert-after: log(r)\n  anchor: |\n    r = call(\n        x)\n");
    CHECK(a.action == Action::insert_after);
    CHECK(a.anchor == "r = call(\n    x)");
    CHECK(sitepatch::recipe::edit_yaml(a) == "  - module: m\n    function: f\n    insert-after: log(r)\n"
                                             "    anchor: |-\n      r = call(\n          x)\n");
    // Without an anchor, insert-after is what it was: after the whole target.
    CHECK(only_edit("- module: m\n  function: f\n  insert-after: x = 1\n").anchor.empty());
  }
  SECTION("set-value") {
    Edit e = only_edit("- file: pkg/_config.py\n  variable: DEBUG\n  set-value: \"False\"\n");
    CHECK(e.action == Action::set_value);
    CHECK(e.kind == TargetKind::variable);
    CHECK(e.code == "False");
    CHECK(e.file == "pkg/_config.py");
    CHECK(e.module.empty());
    CHECK(e.where() == "pkg/_config.py:DEBUG");
  }
  SECTION("ensure-import alone needs no target") {
    Edit e = only_edit("- module: m\n  ensure-import: from a.b import C\n");
    CHECK(e.action == Action::none);
    CHECK(e.target.empty());
    CHECK(e.ensure_import == "from a.b import C");
    CHECK(e.where() == "m");
  }
  SECTION("occurrence") {
    Edit e = only_edit("- module: m\n  function: f\n  occurrence: 2\n  remove-decorator: overload\n");
    CHECK(e.occurrence == 2);
  }
}

TEST_CASE("action and kind names are the YAML words", "[recipe]") {
  CHECK(action_name(Action::none) == "ensure-import");
  CHECK(action_name(Action::replace_body) == "replace-body");
  CHECK(action_name(Action::prepend_body) == "prepend-body");
  CHECK(action_name(Action::add_decorator) == "add-decorator");
  CHECK(action_name(Action::remove_decorator) == "remove-decorator");
  CHECK(action_name(Action::replace_function) == "replace-function");
  CHECK(action_name(Action::replace) == "replace");
  CHECK(action_name(Action::set_value) == "set-value");
  CHECK(action_name(Action::insert_after) == "insert-after");
  CHECK(action_name(Action::insert_before) == "insert-before");
  CHECK(kind_name(TargetKind::function) == "function");
  CHECK(kind_name(TargetKind::class_) == "class");
  CHECK(kind_name(TargetKind::variable) == "variable");
}

TEST_CASE("an edit written as a flow mapping is marked at its brace", "[recipe]") {
  Recipe r = parse("id: a\nedits: [{module: m, ensure-import: import os}]\n", "r.yaml");
  CHECK(r.edits.at(0).mark.line == 2);
  CHECK(r.edits.at(0).mark.column == 9);
}

TEST_CASE("on-upgrade: reapply by default, warn or fail when written", "[recipe]") {
  const std::string edits = "edits:\n- module: m\n  ensure-import: import os\n";
  CHECK(parse("id: a\n" + edits, "r.yaml").on_upgrade == OnUpgrade::reapply);
  CHECK(parse("id: a\non-upgrade: warn\n" + edits, "r.yaml").on_upgrade == OnUpgrade::warn);
  CHECK(parse("id: a\non-upgrade: fail\n" + edits, "r.yaml").on_upgrade == OnUpgrade::fail);
  CHECK(parse("id: a\non-upgrade: reapply\n" + edits, "r.yaml").on_upgrade == OnUpgrade::reapply);
  CHECK(on_upgrade_name(OnUpgrade::warn) == "warn");
}

TEST_CASE("replace-indent: relative by default, absolute when written, in every edit", "[recipe]") {
  const std::string edits = "edits:\n- module: m\n  replace: {old: a, new: b}\n- module: n\n  replace: {old: c, new: d}\n";
  Recipe plain = parse("id: a\n" + edits, "r.yaml");
  CHECK(plain.replace_indent == ReplaceIndent::relative);
  CHECK_FALSE(plain.replace_indent_given);
  CHECK(plain.edits[1].indent == ReplaceIndent::relative);
  Recipe old = parse("id: a\nreplace-indent: absolute\n" + edits, "r.yaml");
  CHECK(old.replace_indent_given);
  CHECK(old.edits[0].indent == ReplaceIndent::absolute);
  CHECK(old.edits[1].indent == ReplaceIndent::absolute);
  CHECK(parse("id: a\nreplace-indent: relative\n" + edits, "r.yaml").replace_indent_given);
  // A history's reading of an older record sets it for the whole recipe.
  set_replace_indent(plain, ReplaceIndent::absolute);
  CHECK(plain.edits[0].indent == ReplaceIndent::absolute);
}

TEST_CASE("parsing grows linearly with the number of edits", "[recipe]") {
  // Each edit's `-` was found by counting lines from the top: 40,000 edits took 13 s
  // of CPU. Linear parsing takes 1-2 s here (yaml-cpp itself); the bound leaves room
  // for a slow machine.
  std::string yaml = "id: big\nedits:\n";
  for (int i = 0; i < 40000; ++i)
    yaml += "  - module: pkg.m" + std::to_string(i / 100) + "\n    function: f" + std::to_string(i % 100) +
            "\n    replace-body: return 1\n";
  std::clock_t t0 = std::clock();
  Recipe r = parse(yaml, "big.yaml");
  double cpu = double(std::clock() - t0) / CLOCKS_PER_SEC;
  CHECK(r.edits.size() == 40000);
  CHECK(r.edits.back().mark.line == 3 + 3 * 39999);
  CHECK(r.edits.back().mark.column == 3);
  INFO("CPU seconds: " << cpu);
  CHECK(cpu < 6.0);
}
