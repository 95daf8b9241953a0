// Defects found trying sitepatch on real packages and real workflows (issue 28): each
// case failed before its fix.
#include <catch2/catch.hpp>

#include <filesystem>

#include "e2e_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("a recipe whose id is applied from another recipe is refused, and two at once too", "[e2e]") {
  e2e::DemoEnv env;
  std::string first = env.recipe("one.yaml", "id: fix\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                             "    function: get_cuda_version\n    replace-body: return Version('12.8')\n");
  std::string second = env.recipe("two.yaml", "id: fix\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                              "    function: get_cuda_path\n    replace-body: return '/opt/cuda'\n");
  REQUIRE(env.sp({"apply", first}).status == 0);
  std::string applied = env.read("flashinfer/jit/cpp_ext.py");
  auto r = env.sp({"apply", second});
  CHECK(r.status == 1);
  CHECK(r.err.find("fix: already applied from another recipe (" + first + ", whose content differs); give " + second +
                   " another id, or roll the applied one back first: sitepatch rollback fix") != std::string::npos);
  CHECK(r.err.find("sitepatch: apply failed; nothing was written") != std::string::npos);
  CHECK(env.read("flashinfer/jit/cpp_ext.py") == applied);
  // The same recipe again is still "already applied", not a clash.
  auto again = env.sp({"apply", first});
  CHECK(again.status == 0);
  CHECK(again.err.find("nothing to do: fix already applied") != std::string::npos);
  // plan says it too, with the same exit as apply.
  CHECK(env.sp({"plan", second}).status == 1);

  REQUIRE(env.sp({"rollback", "fix"}).status == 0);
  // Two at once are an invalid command line, before anything is read.
  r = env.sp({"apply", first, second});
  CHECK(r.status == 2);
  CHECK(r.err.find(second + ":1:1: recipe id `fix` is also the id of " + first) != std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("the usage line of --help names the program, and each command's too", "[e2e]") {
  auto top = testsupport::run_sitepatch({"--help"});
  CHECK(top.out.find("\nUsage: sitepatch [OPTIONS] SUBCOMMAND\n") != std::string::npos);
  auto apply = testsupport::run_sitepatch({"apply", "--help"});
  CHECK(apply.out.find("\nUsage: sitepatch apply [OPTIONS] recipes...\n") != std::string::npos);
}

TEST_CASE("replace whose `old` is not found fails, even where `new` occurs in the function", "[e2e]") {
  e2e::DemoEnv env;
  // `txt` is in get_cuda_version already (three times); `old` is not.
  std::string recipe = env.recipe("nope.yaml", "id: nope\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                               "    function: get_cuda_version\n    replace:\n"
                                               "      old: return Version(matches[1])\n"
                                               "      new: txt\n");
  auto r = env.sp({"apply", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("`old` matched 0 times in get_cuda_version, expected 1") != std::string::npos);
  CHECK(r.err.find("already applied") == std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("ensure-import of a module the environment cannot import: plan warns, apply refuses, --force writes",
          "[e2e][unbound]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("np.yaml", "id: np\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                             "    function: get_cuda_path\n    replace-body: return numpy_is_absent\n"
                                             "    ensure-import: from numpy_is_absent.sub import numpy_is_absent\n");
  std::string why = "its `ensure-import: from numpy_is_absent.sub import numpy_is_absent` names `numpy_is_absent`, "
                    "which this environment's Python cannot find (not installed here): the patched module would fail "
                    "to import; install numpy_is_absent or drop the import at " + recipe + ":3";
  auto plan = env.sp({"plan", recipe});
  CHECK(plan.status == 0);
  CHECK(plan.err.find("    warning: " + why + "\n") != std::string::npos);
  auto r = env.sp({"apply", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find(why + "; or apply --force to write it anyway") != std::string::npos);
  CHECK(env.pristine());
  CHECK(env.sp({"apply", "--dry-run", recipe}).status == 1);
  // torch is installed in the demo venv: the shipped recipe's `import torch` passes.
  CHECK(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  CHECK(env.sp({"apply", "--force", recipe}).status == 0);
}

TEST_CASE("a requires: that a source build's pre-release version misses says why", "[e2e]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  venv.install(testsupport::build_wheel(
      {"srcbuilt", "1.13.0a0+gitunknown", {{"srcbuilt/__init__.py", "def f():\n    return 1\n"}}}, tmp.path + "/w"));
  std::string recipe = tmp.path + "/r.yaml";
  testsupport::spit(recipe, "id: r\nrequires: srcbuilt>=1.13\nedits:\n  - module: srcbuilt\n    function: f\n"
                            "    replace-body: return 2\n");
  auto r = testsupport::run_sitepatch({"--venv", venv.root, "plan", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("r requires srcbuilt>=1.13; installed: srcbuilt 1.13.0a0+gitunknown, a pre-release, which PEP 440 "
                   "orders before 1.13.0: to admit it, write the bound as srcbuilt>=1.13.0a0 (--force applies anyway)") !=
        std::string::npos);
}
