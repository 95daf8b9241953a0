// capture names each edited file by its module where it has one, else by its path.
#include <catch2/catch.hpp>

#include "engine/capture/capture_impl.hpp"

using sitepatch::engine::detail::module_of;

TEST_CASE("module_of: a file's module, or none where a folder or the file is no Python name", "[engine]") {
  CHECK(module_of("flashinfer/jit/cpp_ext.py") == "flashinfer.jit.cpp_ext");
  CHECK(module_of("flashinfer/__init__.py") == "flashinfer");
  CHECK(module_of("six.py") == "six");
  CHECK(module_of("foo.libs/x.py") == "");        // a folder with a dot: no package
  CHECK(module_of("my-pkg/x.py") == "");
  CHECK(module_of("pkg/2to3.py") == "");
  CHECK(module_of("pkg/data.txt") == "");
}
