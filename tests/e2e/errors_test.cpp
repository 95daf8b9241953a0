// Bad input gets a clear error naming the file, line and target, and every file
// stays as it was.
#include <catch2/catch.hpp>

#include <filesystem>

#include "e2e_support.hpp"

TEST_CASE("an edit that fails stops the whole apply, nothing is written", "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("typo.yaml",
                                  "id: typo\n"
                                  "edits:\n"
                                  "  - module: flashinfer.fp4_quantization\n"
                                  "    function: fp4_quantize\n"
                                  "    add-decorator: torch.compiler.disable\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    function: get_cuda_versoin\n"
                                  "    replace-body: |\n"
                                  "      return None\n");
  auto r = env.sp({"apply", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find(recipe + ":6:3: fails  typo  flashinfer.jit.cpp_ext:get_cuda_versoin  replace-body  "
                   "(flashinfer/jit/cpp_ext.py): function get_cuda_versoin is not defined; nearest: "
                   "get_cuda_version, get_cuda_path\n") !=
        std::string::npos);
  CHECK(r.err.find("apply failed; nothing was written") != std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("a name defined in another module of the distribution is pointed to", "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("moved.yaml",
                                  "id: moved\n"
                                  "edits:\n"
                                  "  - module: flashinfer.fp4_quantization\n"
                                  "    function: get_cuda_path\n"
                                  "    add-decorator: torch.compiler.disable\n");
  auto r = env.sp({"plan", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("function get_cuda_path is not defined") != std::string::npos);
  CHECK(r.err.find("flashinfer-python defines it in flashinfer.jit.cpp_ext (flashinfer/jit/cpp_ext.py:10)") !=
        std::string::npos);
}

TEST_CASE("an invalid recipe exits 2 with file:line:col and touches nothing", "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("bad.yaml",
                                  "id: Bad_Id\n"
                                  "edits:\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    fucntion: get_cuda_version\n"
                                  "    replace-body: return 1\n");
  auto r = env.sp({"apply", recipe});
  CHECK(r.status == 2);
  CHECK(r.err.find(recipe + ":1:5:") != std::string::npos);
  CHECK(r.err.find(recipe + ":4:5: unknown key `fucntion`; did you mean `function`?") != std::string::npos);
  CHECK(env.pristine());
  CHECK_FALSE(std::filesystem::exists(env.venv.root + "/.sitepatch"));
}

TEST_CASE("a module that is not installed is named, with a suggestion", "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("nomod.yaml",
                                  "id: nomod\n"
                                  "edits:\n"
                                  "  - module: flashinfer.fp4_quantisation\n"
                                  "    function: fp4_quantize\n"
                                  "    add-decorator: torch.compiler.disable\n");
  auto r = env.sp({"plan", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("module flashinfer.fp4_quantisation not found in " + env.venv.site_packages +
                   "; did you mean flashinfer.fp4_quantization?") != std::string::npos);
}

TEST_CASE("a venv that does not exist is an error naming it", "[e2e]") {
  testsupport::TempDir tmp;
  auto r = testsupport::run_sitepatch(
      {"--venv", tmp.path + "/nope", "plan", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(r.status == 2);  // as "no environment given": the caller's to fix
  CHECK(r.err == "sitepatch: error: no Python environment at " + tmp.path + "/nope: " + tmp.path +
                     "/nope does not exist\n");
}

TEST_CASE("requires: outside the installed version refuses, naming both, --force applies", "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("old.yaml",
                                  "id: old\n"
                                  "requires: flashinfer-python>=0.6\n"
                                  "edits:\n"
                                  "  - module: flashinfer.fp4_quantization\n"
                                  "    function: fp4_quantize\n"
                                  "    add-decorator: torch.compiler.disable\n");
  auto r = env.sp({"apply", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("old requires flashinfer-python>=0.6; installed: flashinfer-python 0.5.3 "
                   "(--force applies anyway)") != std::string::npos);
  CHECK(env.pristine());
  auto forced = env.sp({"apply", "--force", recipe});
  CHECK(forced.status == 0);
  CHECK(env.read("flashinfer/fp4_quantization.py").find("@torch.compiler.disable\n@functools") ==
        std::string::npos);
  CHECK(env.read("flashinfer/fp4_quantization.py").find("@torch.compiler.disable\ndef fp4_quantize(") !=
        std::string::npos);
}

TEST_CASE("code that Python rejects is refused before anything is written", "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("broken.yaml",
                                  "id: broken\n"
                                  "edits:\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    function: get_cuda_version\n"
                                  "    replace-body: |\n"
                                  "      return (1,\n");
  auto r = env.sp({"apply", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("rejects the result: '(' was never closed (from " + recipe + ":6)\n"
                   "    flashinfer/jit/cpp_ext.py, as the edits would make it:\n") != std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("code only Python's compiler rejects is refused, with its line in the file", "[e2e]") {
  // tree-sitter parses `nonlocal` anywhere; Python's symbol table refuses one with no
  // enclosing function binding it. Plan compiles only the changed statement: the error
  // must still come, with the line it has in the whole file.
  e2e::DemoEnv env;
  std::string recipe = env.recipe("nonlocal.yaml",
                                  "id: nonlocal\n"
                                  "edits:\n"
                                  "  - module: flashinfer.jit.cpp_ext\n"
                                  "    function: get_cuda_version\n"
                                  "    replace-body: |\n"
                                  "      nonlocal seen\n"
                                  "      return None\n");
  auto r = env.sp({"plan", recipe});
  CHECK(r.status == 1);
  std::string text = env.read("flashinfer/jit/cpp_ext.py");
  size_t def_at = text.find("def get_cuda_version(");
  REQUIRE(def_at != std::string::npos);
  int nonlocal_line = int(std::count(text.begin(), text.begin() + long(def_at), '\n')) + 3;  // after the docstring
    CHECK(r.err.find(" rejects the result: no binding for nonlocal 'seen' found (from " + recipe + ":6)\n"
                   "    flashinfer/jit/cpp_ext.py, as the edits would make it:\n") != std::string::npos);
  CHECK(r.err.find("  > " + std::to_string(nonlocal_line) + " |     nonlocal seen\n") != std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("rollback of a patch that is not applied lists what is", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  auto r = env.sp({"rollback", "flashinfer-dynamoo"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: no applied patch `flashinfer-dynamoo`; did you mean "
                 "flashinfer-dynamo? (applied: flashinfer-dynamo)\n");
  auto none = env.sp({"rollback"});
  CHECK(none.status == 2);
}

TEST_CASE("a Python older than 3.8 is refused by name", "[e2e]") {
  testsupport::TempDir tmp;
  std::string python = tmp.path + "/old/bin/python3";
  testsupport::spit(python, testsupport::old_python_script());
  std::filesystem::permissions(python, std::filesystem::perms::owner_all);
  auto r = testsupport::run_sitepatch({"--venv", tmp.path + "/old", "list"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: " + python + ": Python 3.6.9 (" + testsupport::outer_python() +
                     ") is too old for the sitepatch agent: it needs 3.8 or newer\n");
}
