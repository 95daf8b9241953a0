// compile_view: the statements an edit changed, on their own lines, for Python to compile.
#include <catch2/catch.hpp>

#include "sitepatch/python/compile_view.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/store/history.hpp"

using sitepatch::python::compile_view;
using sitepatch::python::Module;

namespace {

std::string view_of(const std::string& before, const std::string& after) {
  Module m(after, "m.py");
  auto rows = m.top_level_rows();
  REQUIRE(rows);
  return compile_view(after, *rows, sitepatch::store::changed_rows(before, after));
}

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("compile_view keeps the changed statement on its lines and empties the others", "[python]") {
  std::string before = "import os\n# a comment\n\ndef a():\n    return 1\n\n\ndef b(x,\n      y):\n    return x\n\nZ = [\n  1,\n]\n";
  std::string after = before;
  after.replace(after.find("return x"), 8, "return y");
  std::string view = view_of(before, after);
  CHECK(view == "\n# a comment\n\n\n\n\n\ndef b(x,\n      y):\n    return y\n\n\n\n\n");
  CHECK(lines(view) == lines(after));
}

TEST_CASE("compile_view keeps __future__ imports and statements sharing a line with a kept one", "[python]") {
  std::string before = "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nimport os; x = 1\nY = 2\n";
  std::string after = "\"\"\"Doc.\"\"\"\nfrom __future__ import annotations\nimport os; x = 2\nY = 2\n";
  CHECK(view_of(before, after) == "\nfrom __future__ import annotations\nimport os; x = 2\n\n");
  // A statement over several lines whose last line another starts on.
  before = "a = f(\n  1); b = 2\nc = 3\n";
  after = "a = f(\n  1); b = 3\nc = 3\n";
  CHECK(view_of(before, after) == "a = f(\n  1); b = 3\n\n");
}

TEST_CASE("compile_view of a deletion keeps the statements on both sides of it", "[python]") {
  std::string before = "def a():\n    pass\ndef b():\n    pass\ndef c():\n    pass\n";
  std::string after = "def a():\n    pass\ndef c():\n    pass\n";
  CHECK(view_of(before, after) == "def a():\n    pass\ndef c():\n    pass\n");
  // An inserted comment alone keeps no statement, and the comment stays.
  after = "def a():\n    pass\n# note\ndef b():\n    pass\ndef c():\n    pass\n";
  CHECK(view_of(before, after) == "\n\n# note\n\n\n\n\n");
}

TEST_CASE("compile_view keeps CRLF line ends, and top_level_rows refuses lone CR ends and other encodings", "[python]") {
  std::string before = "def a():\r\n    pass\r\ndef b():\r\n    pass\r\n";
  std::string after = "def a():\r\n    pass\r\ndef b():\r\n    return 1\r\n";
  CHECK(view_of(before, after) == "\r\n\r\ndef b():\r\n    return 1\r\n");
  CHECK_FALSE(Module("x = 1\ry = 2\r", "m.py").top_level_rows());
  CHECK_FALSE(Module("# -*- coding: latin-1 -*-\nx = '\xe9'\n", "m.py").top_level_rows());
  CHECK_FALSE(Module("\xef\xbb\xbfx = 1\n", "m.py").top_level_rows());
}
