// Blocks indented 256 columns or more (issue 48): the grammar's scanner saved each
// indentation in one byte, so 300 columns read back as 44 and a class's second method
// became a function nested in its first. What sitepatch finds must be what Python runs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "unit/python_support.hpp"

using namespace pytest;

namespace {

// A class whose two methods are indented `width` columns, then a module-level function.
std::string wide_class_text(size_t width, const std::string& f_body) {
  const std::string pad(width, ' '), deeper(width + 4, ' ');
  return "class K:\n" + pad + "def f(self):\n" + deeper + f_body + "\n" + pad + "def g(self):\n" + deeper +
         "return 2\n" + "def h():\n    return 3\n";
}

std::vector<std::string> definition_names(const Module& m) {
  std::vector<std::string> out;
  for (const auto& d : m.definitions()) out.push_back(d.qualified);
  return out;
}

}  // namespace

TEST_CASE("methods indented 256 columns or more are found where Python finds them", "[python]") {
  // 300 (past one byte), 40,000 (past 15 bits: four bytes saved) and 70,000 (past 16).
  for (size_t width : {255u, 256u, 300u, 40'000u, 70'000u}) {
    INFO("indented " << width << " columns");
    const std::string src = wide_class_text(width, "return 1");
    Module m(src, "pkg/wide.py");
    // What `ast` reads: K with methods f and g, then h at module level.
    CHECK(definition_names(m) == std::vector<std::string>{"K", "K.f", "K.g", "h"});
    CHECK(m.syntax_problems().empty());

    // Replacing f's body leaves g (and h) alone.
    Run r = run(src, {edit(Action::replace_body, "K.f", "return 9")});
    REQUIRE(r.results.size() == 1);
    CHECK(r.results[0].outcome == Outcome::will_apply);
    CHECK(r.out == wide_class_text(width, "return 9"));
  }
}
