// The write path's guarantees: bytecode cleared, hard links broken, mode kept,
// nothing outside site-packages, CRLF and BOM files kept as they are.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_support.hpp"

namespace fs = std::filesystem;

TEST_CASE("stale bytecode cannot hide an edit: __pycache__ entries are removed", "[e2e]") {
  e2e::DemoEnv env;
  // A .pyc checked by hash only when asked would be used without looking at the source.
  auto c = sitepatch::util::run({env.venv.python, "-m", "compileall", "-q", "--invalidation-mode",
                                 "unchecked-hash", env.venv.site_packages + "/flashinfer"});
  REQUIRE(c.status == 0);
  std::string cache = env.site("flashinfer/jit/__pycache__");
  REQUIRE(!fs::is_empty(cache));
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  for (auto& e : fs::directory_iterator(cache))
    CHECK(e.path().filename().string().rfind("cpp_ext.", 0) != 0);
  auto run = env.venv.run_python("from flashinfer.jit.cpp_ext import get_cuda_version; print(get_cuda_version())");
  CHECK(run.out == "12.8\n");
  // Untouched modules keep their bytecode.
  bool init_kept = false;
  for (auto& e : fs::directory_iterator(env.site("flashinfer/__pycache__")))
    init_kept = init_kept || e.path().filename().string().rfind("__init__.", 0) == 0;
  CHECK(init_kept);
}

TEST_CASE("a hard-linked file is replaced, not written through, its mode is kept", "[e2e]") {
  e2e::DemoEnv env;
  std::string file = env.site("flashinfer/jit/cpp_ext.py");
  std::string cache_copy = env.tmp.path + "/uv-cache-cpp_ext.py";
  REQUIRE(::link(file.c_str(), cache_copy.c_str()) == 0);
  REQUIRE(::chmod(file.c_str(), 0640) == 0);
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  CHECK(testsupport::slurp(cache_copy) == env.installed.at("jit/cpp_ext.py"));
  CHECK(env.read("flashinfer/jit/cpp_ext.py") != env.installed.at("jit/cpp_ext.py"));
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(st.st_nlink == 1);
}

TEST_CASE("a symlink leading out of site-packages is refused", "[e2e]") {
  e2e::DemoEnv env;
  std::string outside = env.tmp.path + "/outside.py";
  testsupport::spit(outside, "def f():\n    return 1\n");
  fs::create_symlink(outside, env.site("evil.py"));
  std::string recipe = env.recipe("evil.yaml",
                                  "id: evil\n"
                                  "edits:\n"
                                  "  - file: evil.py\n"
                                  "    function: f\n"
                                  "    replace-body: return 2\n");
  auto r = env.sp({"apply", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("evil.py resolves to " + outside + ", outside site-packages (" +
                   env.venv.site_packages + "); refusing to touch it") != std::string::npos);
  CHECK(testsupport::slurp(outside) == "def f():\n    return 1\n");
}

TEST_CASE("a path with .. is an invalid recipe", "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("up.yaml",
                                  "id: up\n"
                                  "edits:\n"
                                  "  - file: ../../../../etc/passwd.py\n"
                                  "    function: f\n"
                                  "    replace-body: return 2\n");
  auto r = env.sp({"plan", recipe});
  CHECK(r.status == 2);
  CHECK(r.err.find(recipe + ":3:") != std::string::npos);
}

TEST_CASE("CRLF line endings and a BOM survive apply and rollback byte for byte", "[e2e]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string crlf = "\xEF\xBB\xBF\"\"\"Windows-made.\"\"\"\r\nimport os\r\n\r\n\r\n"
                     "def get():\r\n\treturn os.sep\r\n";
  venv.install(testsupport::build_wheel({"winpkg", "1.0", {{"winpkg/__init__.py", crlf}}}, tmp.path));
  std::string recipe = tmp.path + "/r.yaml";
  testsupport::spit(recipe,
                    "id: win\n"
                    "edits:\n"
                    "  - module: winpkg\n"
                    "    function: get\n"
                    "    replace-body: |\n"
                    "      if os:\n"
                    "          return '/'\n"
                    "      return os.sep\n");
  auto r = testsupport::run_sitepatch({"--venv", venv.root, "apply", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(testsupport::slurp(venv.site_packages + "/winpkg/__init__.py") ==
        "\xEF\xBB\xBF\"\"\"Windows-made.\"\"\"\r\nimport os\r\n\r\n\r\n"
        "def get():\r\n\tif os:\r\n\t\treturn '/'\r\n\treturn os.sep\r\n");
  CHECK(venv.run_python("import winpkg; print(winpkg.get())").out == "/\n");
  REQUIRE(testsupport::run_sitepatch({"--venv", venv.root, "rollback", "--all"}).status == 0);
  CHECK(testsupport::slurp(venv.site_packages + "/winpkg/__init__.py") == crlf);
}
