// Deep texts in the python module's own walks (issue 48): what a function returns is
// read without recursing as deep as its value nests, and without walking the body
// again for each name it holds.
#include <catch2/catch.hpp>

#include <string>

#include "sitepatch/python/constancy.hpp"

namespace {

std::string times(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * size_t(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("a return value nested 100000 deep is read as unknown without deep recursion", "[python]") {
  const std::string src = "def f(p):\n    return " + times("(p, ", 100'000) + "p" + times(")", 100'000) + "\n";
  auto facts = sitepatch::python::function_facts(src, "f");
  REQUIRE(facts.found);
  CHECK(facts.result.kind == sitepatch::python::ResultFacts::unknown);
  CHECK(facts.result.why.find("nested too deep to read") != std::string::npos);
  // A few levels are still read item by item.
  auto shallow = sitepatch::python::function_facts("def f():\n    return ((1, 2), (3, ('a', None)))\n", "f");
  CHECK(shallow.result.kind == sitepatch::python::ResultFacts::holdable);
}
