// syntax_problems: ERROR and MISSING nodes with their 1-based line and column.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;
using sitepatch::python::SyntaxProblem;

namespace {

std::vector<std::string> problems(const std::string& src) {
  std::vector<std::string> out;
  for (const SyntaxProblem& p : Module(src).syntax_problems())
    out.push_back(std::to_string(p.line) + ":" + std::to_string(p.column) + ": " + p.message);
  return out;
}

}  // namespace

TEST_CASE("valid code has no syntax problems", "[python]") {
  CHECK(problems("def f(x):\n    return (x,\n            1)\n").empty());
}

TEST_CASE("broken code reports errors and missing tokens", "[python]") {
  CHECK(problems("def f(:\n    return 1\n") == std::vector<std::string>{"1:7: missing `)`"});
  CHECK(problems("x = 1\ndef g():\n    return foo(1, 2\n") == std::vector<std::string>{"3:5: syntax error"});
  CHECK(problems("class A:\n    def m(self)\n        pass\n") == std::vector<std::string>{"2:5: syntax error"});
}

TEST_CASE("an edited module re-parsed incrementally matches a fresh parse", "[python]") {
  using namespace sitepatch;
  std::string src =
      "\xEF\xBB\xBF\"\"\"Doc.\"\"\"\nimport os\n\n\n@functools.cache\ndef a(x):\n    return x\n\n\n"
      "class K:\n    def m(self):\n        return 1\n\n\ndef b():\n    pass\n";
  python::Module m(src);
  recipe::Edit body, deco, imp;
  body.target = "a";
  body.action = recipe::Action::replace_body;
  body.code = "y = x * 2\nreturn y\n";
  deco.target = "K.m";
  deco.action = recipe::Action::add_decorator;
  deco.code = "staticmethod";
  imp.action = recipe::Action::none;
  imp.ensure_import = "import torch";
  std::vector<python::EditResult> results;
  std::vector<python::TextChange> changes;
  std::string out = m.apply({&body, &deco, &imp}, results, &changes);
  REQUIRE(changes.size() == 3);
  auto inc = m.edited(out, changes);
  python::Module fresh(out);
  auto names = [](const python::Module& x) {
    std::vector<std::string> v;
    for (auto& d : x.definitions()) v.push_back(d.qualified + ":" + std::to_string(d.line));
    return v;
  };
  CHECK(names(inc) == names(fresh));
  CHECK(inc.syntax_problems().empty());

  // A broken edit is found by the incremental parse at the same place as a fresh one.
  recipe::Edit broken;
  broken.target = "b";
  broken.action = recipe::Action::replace_body;
  broken.code = "return (1,\n";
  std::string bad = m.apply({&broken}, results, &changes);
  auto p1 = m.edited(bad, changes).syntax_problems();
  auto p2 = python::Module(bad).syntax_problems();
  REQUIRE(!p1.empty());
  REQUIRE(p1.size() == p2.size());
  CHECK(p1[0].line == p2[0].line);
  CHECK(p1[0].column == p2[0].column);
}

// Debian's tree-sitter 0.20.7 kept a node's child count in 16 bits: 65,536 comments in a
// row, or one long syntax error, made it free a bad pointer (exit 134). The library
// sitepatch builds (cmake/TreeSitterLib.cmake) holds any count.
TEST_CASE("a module with more than 65,535 comment lines or unclosed brackets parses and frees", "[python]") {
  std::string comments = "def f():\n    return 1\n";
  for (int i = 0; i < 70000; ++i) comments += "# c\n";
  CHECK(problems(comments).empty());
  std::string middle = "x = [\n";
  for (int i = 0; i < 70000; ++i) middle += "  # c\n";
  CHECK(problems(middle + "]\n").empty());
  std::string open = "x = (\n";
  for (int i = 0; i < 70000; ++i) open += "(\n";
  CHECK(!problems(open).empty());
}
