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
