// Folders `import` searches that the environment does not own: a folder a .pth file
// adds, and the system's dist-packages seen through --system-site-packages. Plan finds
// the file Python would load and says whose it is; apply refuses to write there unless
// --system is given.
#include <catch2/catch.hpp>

#include <filesystem>

#include "e2e_support.hpp"

namespace fs = std::filesystem;

namespace {

const char* kModule = "def greet():\n    return 'shared'\n";

struct PthEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string shared = tmp.path + "/shared";
  std::string recipe = tmp.path + "/r.yaml";
  PthEnv() {
    testsupport::spit(shared + "/sharedpkg/__init__.py", kModule);
    testsupport::spit(venv.site_packages + "/extra.pth", shared + "\n");
    testsupport::spit(recipe,
                      "id: shared-greet\n"
                      "edits:\n"
                      "  - module: sharedpkg\n"
                      "    function: greet\n"
                      "    replace-body: return 'patched'\n");
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
};

}  // namespace

TEST_CASE("a module in a .pth folder is found, and apply writes there only with --system", "[e2e]") {
  PthEnv env;
  REQUIRE(env.venv.run_python("import sharedpkg; print(sharedpkg.greet())").out == "shared\n");
  std::string note = "where  sharedpkg/__init__.py is in " + env.shared +
                     ", which belongs to a folder on sys.path that a .pth file (or PYTHONPATH) adds, not this "
                     "environment's own, not to this environment: every environment that uses it would change";

  auto plan = env.sp({"plan", env.recipe});
  INFO(plan.err);
  CHECK(plan.status == 0);
  CHECK(plan.err.find(note + "; apply needs --system\n") != std::string::npos);
  CHECK(plan.out.find("+    return 'patched'") != std::string::npos);

  auto refused = env.sp({"apply", env.recipe});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("sitepatch: error: refusing to write outside this environment: " + env.shared +
                         " (sharedpkg/__init__.py) belongs to a folder on sys.path that a .pth file (or "
                         "PYTHONPATH) adds, not this environment's own. Every environment that shares that "
                         "folder would change, and the patch would outlive this environment; nothing was "
                         "written. Give --system to patch it anyway\n") != std::string::npos);
  CHECK(testsupport::slurp(env.shared + "/sharedpkg/__init__.py") == kModule);
  CHECK(env.sp({"list"}).out == "no patches applied in " + env.venv.root + "\n");

  auto applied = env.sp({"apply", "--system", env.recipe});
  INFO(applied.err);
  CHECK(applied.status == 0);
  CHECK(applied.err.find("sitepatch: --system: writing outside this environment (" + env.shared) !=
        std::string::npos);
  CHECK(env.venv.run_python("import sharedpkg; print(sharedpkg.greet())").out == "patched\n");
  CHECK(fs::exists(env.shared + "/.sitepatch-patched.json"));
  CHECK(env.sp({"verify"}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(testsupport::slurp(env.shared + "/sharedpkg/__init__.py") == kModule);
  CHECK(!fs::exists(env.shared + "/.sitepatch-patched.json"));
}

TEST_CASE("a module that shadows another further down sys.path is the one planned, and plan says so", "[e2e]") {
  PthEnv env;
  std::string own = env.venv.site_packages + "/sharedpkg/__init__.py";
  testsupport::spit(own, kModule);
  auto plan = env.sp({"plan", env.recipe});
  INFO(plan.err);
  CHECK(plan.status == 0);
  CHECK(plan.err.find("where  " + own + " is the file Python imports; it shadows " + env.shared +
                      "/sharedpkg/__init__.py, which this plan leaves alone\n") != std::string::npos);
  REQUIRE(env.sp({"apply", env.recipe}).status == 0);
  CHECK(env.venv.run_python("import sharedpkg; print(sharedpkg.greet())").out == "patched\n");
  CHECK(testsupport::slurp(env.shared + "/sharedpkg/__init__.py") == kModule);
}

TEST_CASE("through --system-site-packages, Debian's dist-packages is planned but never written silently", "[e2e]") {
  const std::string system_python = "/usr/bin/python3";
  const std::string target = "/usr/lib/python3/dist-packages/wheel/__init__.py";
  if (!fs::exists(system_python) || !fs::exists(target)) {
    WARN("no Debian python3 with python3-wheel here: skipped");
    return;
  }
  testsupport::TempDir tmp;
  REQUIRE(sitepatch::util::run({system_python, "-m", "venv", "--without-pip", "--system-site-packages",
                                tmp.path + "/venv"})
              .status == 0);
  std::string before = testsupport::slurp(target);
  std::string recipe = tmp.path + "/r.yaml";
  testsupport::spit(recipe,
                    "id: probe\n"
                    "edits:\n"
                    "  - module: wheel\n"
                    "    ensure-import: import json as sitepatch_probe\n");
  auto plan = testsupport::run_sitepatch({"--venv", tmp.path + "/venv", "plan", recipe});
  INFO(plan.err);
  CHECK(plan.status == 0);
  CHECK(plan.err.find("where  wheel/__init__.py is in /usr/lib/python3/dist-packages, which belongs to the system "
                      "Python (Debian's dpkg owns its files: apt upgrade replaces them), not to this environment") !=
        std::string::npos);
  auto apply = testsupport::run_sitepatch({"--venv", tmp.path + "/venv", "apply", recipe});
  CHECK(apply.status == 1);
  CHECK(apply.err.find("refusing to write outside this environment: /usr/lib/python3/dist-packages (wheel/__init__.py)") !=
        std::string::npos);
  CHECK(testsupport::slurp(target) == before);
}
