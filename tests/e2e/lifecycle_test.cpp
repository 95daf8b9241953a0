// Two recipes on one file, verify's states, and an apply interrupted half-way.
#include <catch2/catch.hpp>

#include <filesystem>

#include "e2e_support.hpp"

namespace {

const char* kVersionRecipe =
    "id: cuda-version\n"
    "edits:\n"
    "  - module: flashinfer.jit.cpp_ext\n"
    "    function: get_cuda_version\n"
    "    replace-body: |\n"
    "      return Version(torch.version.cuda)\n";

const char* kLockRecipe =
    "id: no-lock\n"
    "edits:\n"
    "  - module: flashinfer.jit.cpp_ext\n"
    "    function: load_cuda_ops\n"
    "    replace: {old: 'with open(lock_path, \"a\"):', new: 'if False:  # no lock file'}\n";

}  // namespace

TEST_CASE("rolling back one of two recipes on one file keeps the other's edit", "[e2e]") {
  e2e::DemoEnv env;
  auto a = env.recipe("a.yaml", kVersionRecipe);
  auto b = env.recipe("b.yaml", kLockRecipe);
  REQUIRE(env.sp({"apply", a}).status == 0);
  auto rb = env.sp({"apply", b});
  INFO(rb.err);
  REQUIRE(rb.status == 0);
  std::string both = env.read("flashinfer/jit/cpp_ext.py");
  REQUIRE(both.find("return Version(torch.version.cuda)") != std::string::npos);
  REQUIRE(both.find("with open(lock_path") == std::string::npos);

  REQUIRE(env.sp({"rollback", "cuda-version"}).status == 0);
  std::string only_b = env.read("flashinfer/jit/cpp_ext.py");
  CHECK(only_b.find("return Version(torch.version.cuda)") == std::string::npos);
  CHECK(only_b.find("subprocess.check_output([nvcc") != std::string::npos);
  CHECK(only_b.find("with open(lock_path") == std::string::npos);
  auto v = env.sp({"verify"});
  CHECK(v.status == 0);
  CHECK(v.out == "no-lock  applied\n  flashinfer/jit/cpp_ext.py  applied\n");

  REQUIRE(env.sp({"rollback", "no-lock"}).status == 0);
  CHECK(env.pristine());
}

TEST_CASE("verify tells modified, reverted and missing, and exits 3", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string cpp = env.site("flashinfer/jit/cpp_ext.py");
  testsupport::spit(cpp, testsupport::slurp(cpp) + "\n# a local note\n");
  testsupport::spit(env.site("flashinfer/fp4_quantization.py"), env.installed.at("fp4_quantization.py"));
  auto v = env.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out ==
        "flashinfer-dynamo  reverted\n"
        "  flashinfer/jit/cpp_ext.py  modified  (flashinfer/jit/cpp_ext.py was changed by someone "
        "else; the edit is still in it)\n"
        "  flashinfer/fp4_quantization.py  reverted  (flashinfer/fp4_quantization.py is back to its "
        "original)\n");
  std::filesystem::remove(cpp);
  auto m = env.sp({"verify", "flashinfer-dynamo"});
  CHECK(m.status == 3);
  CHECK(m.out.find("flashinfer/jit/cpp_ext.py  missing") != std::string::npos);
}

TEST_CASE("rollback --dry-run prints the diff and writes nothing", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string patched = env.read("flashinfer/jit/cpp_ext.py");
  auto r = env.sp({"rollback", "--all", "--dry-run"});
  CHECK(r.status == 0);
  CHECK(r.out.find("-    return Version(torch.version.cuda)") != std::string::npos);
  CHECK(env.read("flashinfer/jit/cpp_ext.py") == patched);
  CHECK(env.sp({"verify"}).status == 0);
}

TEST_CASE("log lists applies and rollbacks, newest first", "[e2e]") {
  e2e::DemoEnv env;
  CHECK(env.sp({"log"}).out == "no history yet in " + env.venv.root + "/.sitepatch\n");
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  auto log = env.sp({"log"});
  CHECK(log.status == 0);
  auto lines = sitepatch::util::split(log.out, '\n');
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].find("rollback flashinfer-dynamo") != std::string::npos);
  CHECK(lines[1].find("apply flashinfer-dynamo") != std::string::npos);
}

TEST_CASE("rollback --all with nothing applied records nothing, however often it runs", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  auto commits = [&] {
    auto r = sitepatch::util::run({"git", "--git-dir", env.venv.root + "/.sitepatch", "rev-list", "--count", "--all"});
    REQUIRE(r.status == 0);
    return r.out;
  };
  std::string before = commits();
  for (int i = 0; i < 2; ++i) {
    auto r = env.sp({"rollback", "--all"});
    CHECK(r.status == 0);
  }
  CHECK(commits() == before);
  CHECK(env.pristine());
}

TEST_CASE("a recipe its requires: leaves out says why once, each edit only that it is skipped", "[e2e]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");  // no flashinfer in it
  auto r = testsupport::run_sitepatch({"--venv", venv.root, "plan", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(r.status == 1);
  CHECK(r.err == "skipped  flashinfer-dynamo  flashinfer.jit.cpp_ext:get_cuda_version  replace-body\n"
                 "skipped  flashinfer-dynamo  flashinfer.fp4_quantization:fp4_quantize  add-decorator\n"
                 "fails  flashinfer-dynamo requires flashinfer-python>=0.4,<0.7, which is not installed\n");
}
