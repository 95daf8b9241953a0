// plainly_defines: plan's look at a file's text before it parses it.
#include <catch2/catch.hpp>

#include "sitepatch/python/module.hpp"

using sitepatch::python::plainly_defines;

TEST_CASE("plainly_defines: a def, async def or class at column 0, and nothing it cannot see plainly", "[python]") {
  std::string text = "import os\n\ndef get(x):\n    pass\n\nasync def fetch (y):\n    pass\nclass Pool:\n    pass\n"
                     "class Adapter(Base):\n    def send(self):\n        pass\n";
  CHECK(plainly_defines(text, "get"));
  CHECK(plainly_defines(text, "fetch"));
  CHECK(plainly_defines(text, "Pool"));
  CHECK(plainly_defines(text, "Adapter"));
  CHECK_FALSE(plainly_defines(text, "ge"));      // a prefix of a name
  CHECK_FALSE(plainly_defines(text, "send"));    // a method: not at the top level
  CHECK_FALSE(plainly_defines(text, "os"));      // bound by import: a Module says so
  CHECK_FALSE(plainly_defines("from .x import get\n", "get"));
  CHECK_FALSE(plainly_defines("if X:\n    def get():\n        pass\n", "get"));
  CHECK_FALSE(plainly_defines(text, ""));
  CHECK(plainly_defines("def get(x): pass", "get"));  // the text's first line
}
