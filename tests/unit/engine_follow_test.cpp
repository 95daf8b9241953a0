// Re-exports: which module a `from` import names, and which names a module binds that way.
#include <catch2/catch.hpp>

#include "engine/edits/follow.hpp"
#include "sitepatch/python/module.hpp"

using sitepatch::engine::detail::resolve_import;

TEST_CASE("relative imports resolve against the importing module, packages counting as their own base",
          "[engine]") {
  CHECK(resolve_import("flashinfer.fp4_quantization", false, ".quantization.fp4") ==
        "flashinfer.quantization.fp4");
  CHECK(resolve_import("flashinfer", true, ".fp4_quantization") == "flashinfer.fp4_quantization");
  CHECK(resolve_import("a.b.c", false, "..x") == "a.x");
  CHECK(resolve_import("a.b", true, "..x") == "a.x");
  CHECK(resolve_import("a.b.c", false, ".") == "a.b");
  CHECK(resolve_import("a.b.c", false, "torch.nn") == "torch.nn");
  CHECK(resolve_import("a", false, "..x") == "");  // above the top-level package
}

TEST_CASE("a module's top-level from-imports, star imports and renames included", "[python]") {
  sitepatch::python::Module m(
      "import os\n"
      "from .impl import real as fp4_quantize, other\n"
      "from ..pkg import *\n"
      "def f():\n"
      "    from inner import hidden\n");
  auto names = m.imported_names();
  REQUIRE(names.size() == 3);
  CHECK(names[0].bound == "fp4_quantize");
  CHECK(names[0].module == ".impl");
  CHECK(names[0].name == "real");
  CHECK(names[0].line == 2);
  CHECK(names[1].bound == "other");
  CHECK(names[1].name == "other");
  CHECK(names[2].bound == "*");
  CHECK(names[2].module == "..pkg");
}
