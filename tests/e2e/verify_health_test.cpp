// verify asks whether each patched module would still import, not only whether its
// bytes are sitepatch's: a module an edit imports that was uninstalled, a name an edit
// uses that nothing binds (written with --force), a file that no longer compiles. Each
// exits 3 and says why.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

const char* kDisable =
    "id: disable-probe\n"
    "edits:\n"
    "  - module: flashinfer.jit.cpp_ext\n"
    "    function: get_cuda_version\n"
    "    add-decorator: torch.compiler.disable\n"
    "    ensure-import: import torch\n";

}  // namespace

TEST_CASE("verify exits 3 when a module an edit imports is uninstalled, naming it", "[e2e][verify]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", env.recipe("d.yaml", kDisable)}).status == 0);
  auto fine = env.sp({"verify"});
  CHECK(fine.status == 0);
  CHECK(fine.out.find("broken") == std::string::npos);
  env.venv.uninstall("torch");
  auto r = env.sp({"verify"});
  INFO(r.out + r.err);
  CHECK(r.status == 3);
  CHECK(r.out.find("disable-probe  applied\n"
                   "  flashinfer/jit/cpp_ext.py  applied\n"
                   "    broken: imports torch, which this environment's Python cannot find: the module fails to "
                   "import\n") != std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "verify"}).out);
  CHECK(j["ok"] == false);
  CHECK(j["patches"][0]["files"][0]["broken"] ==
        "imports torch, which this environment's Python cannot find: the module fails to import");
}

TEST_CASE("verify exits 3 when a patch uses a name nothing binds, or the file no longer compiles", "[e2e][verify]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("h.yaml",
                                  "id: helper\n"
                                  "edits:\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    function: get_cuda_version\n"
                                  "    replace-body: return cuda_from_torch()\n");
  // apply refuses the unbound name; --force writes it anyway, and verify keeps saying so.
  CHECK(env.sp({"apply", recipe}).status != 0);
  REQUIRE(env.sp({"apply", "--force", recipe}).status == 0);
  auto r = env.sp({"verify"});
  INFO(r.out + r.err);
  CHECK(r.status == 3);
  CHECK(r.out.find("    broken: uses cuda_from_torch, which nothing in flashinfer/jit/cpp_ext.py binds any more: "
                   "the module raises NameError where it runs\n") != std::string::npos);

  // A hand edit that breaks the syntax: changed by someone, and broken, in Python's words.
  std::string path = env.site("flashinfer/jit/cpp_ext.py");
  testsupport::spit(path, testsupport::slurp(path) + "\ndef broken(:\n");
  auto b = env.sp({"verify"});
  INFO(b.out);
  CHECK(b.status == 3);
  CHECK(b.out.find("  flashinfer/jit/cpp_ext.py  modified") != std::string::npos);
  CHECK(b.out.find("does not compile in " + env.venv.python) != std::string::npos);
  CHECK(b.out.find("(flashinfer/jit/cpp_ext.py, line ") != std::string::npos);
}
