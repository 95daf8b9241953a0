// module_bindings: a name bound in the arms of a try or an if, a C function beside the
// library's own pure-Python definition (python/fallback.cpp).
#include <catch2/catch.hpp>

#include "sitepatch/python/fallback.hpp"

using sitepatch::python::module_bindings;

TEST_CASE("fallback: a name bound by an import in a try and by a def in its except, and where new code may follow",
          "[python][fallback]") {
  const std::string src =
      "import os\n"                               // 1
      "try:\n"                                    // 2
      "    from ._speedups import checksum\n"     // 3
      "except ImportError:\n"                     // 4
      "    @functools.lru_cache\n"                // 5
      "    def checksum(data, value=0):\n"        // 6
      "        if data:\n"                        // 7
      "            return value + 1\n"            // 8
      "        return value\n"                    // 9
      "\n"
      "if os.name == 'nt':\n"                     // 11
      "    from .win import checksum as checksum\n"  // 12
      "\n"
      "class Reader:\n"                           // 14
      "    def checksum(self):\n"                 // 15: a method, no binding of the module's name
      "        pass\n"
      "\n"
      "def use(x):\n"
      "    return checksum(x)\n";
  auto b = module_bindings(src, "checksum", "pkg.io", false);
  REQUIRE(b.defs.size() == 1);
  CHECK(b.defs[0] ==
        "@functools.lru_cache\n"
        "def checksum(data, value=0):\n"
        "    if data:\n"
        "        return value + 1\n"
        "    return value");
  CHECK(b.imports == std::vector<std::string>{"pkg._speedups:checksum", "pkg.win:checksum"});
  CHECK(b.last_line == 12);
  CHECK(b.next_definition == "Reader");
  CHECK(b.next_is_class);

  // In a package's __init__, `.` is the package itself; a name bound nowhere gives nothing.
  auto init = module_bindings("try:\n    from zlib import crc32 as h\nexcept ImportError:\n    from ._pure import h\n"
                              "def f():\n    return h(b'')\n",
                              "h", "pkg", true);
  CHECK(init.imports == std::vector<std::string>{"zlib:crc32", "pkg._pure:h"});
  CHECK(init.defs.empty());
  CHECK(init.next_definition == "f");
  CHECK(!init.next_is_class);
  auto none = module_bindings("def f():\n    return 1\n", "g", "pkg", true);
  CHECK(none.last_line == 0);
  CHECK(none.next_definition.empty());
}
