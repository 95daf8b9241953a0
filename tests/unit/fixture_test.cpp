#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "support/fixture.hpp"

using namespace testsupport;

TEST_CASE("a built wheel installs into a venv with pip, imports, upgrades, uninstalls", "[fixture]") {
  TempDir tmp;
  std::string v1 = build_wheel({"hello-fixture", "1.0",
                                {{"hello_fixture/__init__.py", "def greet():\n    return 'hi'\n"}}},
                               tmp.path + "/wheels");
  CHECK(v1 == tmp.path + "/wheels/hello_fixture-1.0-py3-none-any.whl");
  Venv venv = Venv::create(tmp.path + "/venv");
  CHECK(venv.site_packages == venv.root + "/lib/python" +
                                  venv.run_python("import sys; print('%d.%d' % sys.version_info[:2], end='')").out +
                                  "/site-packages");

  // Given the wheel installed by pip, its module imports from the venv's site-packages.
  venv.install(v1);
  auto r = venv.run_python("import hello_fixture; print(hello_fixture.greet(), hello_fixture.__file__)");
  REQUIRE(r.status == 0);
  CHECK(r.out == "hi " + venv.site_packages + "/hello_fixture/__init__.py\n");
  struct stat st;
  CHECK(::stat((venv.site_packages + "/hello_fixture-1.0.dist-info/RECORD").c_str(), &st) == 0);

  // An upgrade replaces it; an uninstall removes it.
  std::string v2 = build_wheel({"hello-fixture", "2.0",
                                {{"hello_fixture/__init__.py", "def greet():\n    return 'hello'\n"}}},
                               tmp.path + "/wheels");
  venv.upgrade(v2);
  CHECK(venv.run_python("import hello_fixture; print(hello_fixture.greet())").out == "hello\n");
  venv.uninstall("hello-fixture");
  CHECK(venv.run_python("import hello_fixture").status != 0);
}

TEST_CASE("TempDir is fresh and removed afterwards, spit and slurp round-trip bytes", "[fixture]") {
  std::string path;
  {
    TempDir tmp;
    path = tmp.path;
    std::string bytes("a\0b\r\n\xff", 6);
    spit(tmp.path + "/x/y/z.bin", bytes);
    CHECK(slurp(tmp.path + "/x/y/z.bin") == bytes);
  }
  struct stat st;
  if (!std::getenv("SITEPATCH_KEEP_TMP")) CHECK(::stat(path.c_str(), &st) != 0);
  CHECK_THROWS(slurp(path + "/nope"));
}
