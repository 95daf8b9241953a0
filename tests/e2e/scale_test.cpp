// plan stays linear in memory with many edits in one module (issue 10, #16): each
// located file was copied once per edit, 349 MB for 2,000 edits in a 200 KB module.
#include <sys/resource.h>

#include <catch2/catch.hpp>

#include "e2e_support.hpp"

TEST_CASE("plan of 2000 edits in one module holds the module once", "[e2e]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string module = "import os\n\n\n";
  std::string recipe = "id: many\nedits:\n";
  for (int f = 0; f < 2000; ++f) {
    std::string n = std::to_string(f);
    module += "def f" + n + "(x):\n    \"\"\"Function " + n + ".\"\"\"\n    total = x + " + n + "\n    return total\n\n\n";
    recipe += "  - module: many.deep\n    function: f" + n + "\n    replace-body: return x * 2\n";
  }
  venv.install(testsupport::build_wheel({"many", "1.0", {{"many/__init__.py", ""}, {"many/deep.py", module}}},
                                        tmp.path + "/wheels"));
  testsupport::spit(tmp.path + "/many.yaml", recipe);

  auto r = testsupport::run_sitepatch({"--venv", venv.root, "plan", "-q", tmp.path + "/many.yaml"});
  REQUIRE(r.status == 0);
  size_t applying = 0;
  for (size_t at = r.err.find("will apply  many"); at != std::string::npos; at = r.err.find("will apply  many", at + 1))
    ++applying;
  CHECK(applying == 2000);
  // The peak of every child this test waited for (pip's included): well under what
  // 2,000 copies of the module took.
  struct rusage ru {};
  getrusage(RUSAGE_CHILDREN, &ru);
  INFO("peak KB of a child: " << ru.ru_maxrss);
  CHECK(ru.ru_maxrss < 150 * 1024);
}
