// Audit precision, one construct per fixture package built here (issue 38): only calls
// are operations (no pure attribute, no class used as a value, no pure pathlib method);
// calls into modules not installed are counted (audit_missing_test.cpp).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

struct PrecisionEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  explicit PrecisionEnv(const testsupport::WheelSpec& spec) : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    venv.install(testsupport::build_wheel(spec, tmp.path + "/wheels"));
  }
  // Each chain as "op (rule) <- function:line".
  std::vector<std::string> chains(const std::string& entry) const {
    auto r = testsupport::run_sitepatch({"--venv", venv.root, "--json", "audit", entry});
    INFO(r.err);
    REQUIRE(r.status == 0);
    std::vector<std::string> out;
    auto doc = nlohmann::json::parse(r.out);
    for (auto& c : doc["chains"]) {
      auto& last = c["steps"].back();
      out.push_back(c["operation"].get<std::string>() + " (" + c["rule"]["id"].get<std::string>() + ") <- " +
                    last["function"].get<std::string>() + ":" + std::to_string(last["line"].get<int>()));
    }
    return out;
  }
};

}  // namespace

TEST_CASE("audit: only calls are operations: no pure attribute, class used as a value or pure pathlib method",
          "[e2e][audit]") {
  PrecisionEnv env({"purepath",
                    "1.0",
                    {{"purepath/__init__.py", ""},
                     {"purepath/build.py",
                      "import contextlib\n"
                      "import subprocess\n"
                      "from pathlib import Path\n"
                      "\n"
                      "\n"
                      "def build(root: Path):\n"
                      "    with contextlib.suppress(subprocess.CalledProcessError):\n"
                      "        pass\n"
                      "    parent = root.parent\n"
                      "    lib = root.with_suffix('.so')\n"
                      "    name = root.name\n"
                      "    rel = root.relative_to('/')\n"
                      "    joined = root.joinpath('x')\n"
                      "    if root.exists():\n"
                      "        return root.read_text()\n"
                      "    return [parent, lib, name, rel, joined]\n"}}});
  CHECK(env.chains("purepath.build:build") ==
        std::vector<std::string>{"pathlib.Path.exists (pathlib-check) <- purepath.build:build:14",
                                 "pathlib.Path.read_text (pathlib-io) <- purepath.build:build:15"});
}
