// Folders `import` searches that the environment does not own: a folder a .pth file
// adds, and the system's dist-packages seen through --system-site-packages. Plan finds
// the file Python would load and says whose it is; apply refuses to write there unless
// --system is given.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

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
  // dpkg's own file list names the package.
  CHECK(plan.err.find("where  wheel/__init__.py is in /usr/lib/python3/dist-packages (Debian package python3-wheel), "
                      "which belongs to the system Python (Debian's dpkg owns its files: apt upgrade replaces them), "
                      "not to this environment") != std::string::npos);
  auto apply = testsupport::run_sitepatch({"--venv", tmp.path + "/venv", "apply", recipe});
  CHECK(apply.status == 1);
  CHECK(apply.err.find("refusing to write outside this environment: /usr/lib/python3/dist-packages "
                       "(wheel/__init__.py, Debian package python3-wheel) belongs to the system Python") !=
        std::string::npos);
  CHECK(testsupport::slurp(target) == before);
}

namespace {

const char* kBaseModule =
    "import subprocess\n"
    "\n"
    "def version():\n"
    "    return subprocess.run(['nvcc', '--version'])\n";

// A base interpreter the test builds, with a test distribution in its own
// site-packages, and two venvs made from it with --system-site-packages.
struct BaseEnv {
  testsupport::TempDir tmp;
  testsupport::Venv base = testsupport::base_interpreter(tmp.path + "/base");
  testsupport::Venv one = testsupport::venv_from(base.python, tmp.path + "/one", true);
  testsupport::Venv two = testsupport::venv_from(base.python, tmp.path + "/two", true);
  std::string file = base.site_packages + "/basepkg/__init__.py";
  std::string recipe = tmp.path + "/r.yaml";
  std::string history = base.root + "/.sitepatch";
  BaseEnv() {
    base.install(testsupport::build_wheel({"basepkg", "1.0", {{"basepkg/__init__.py", kBaseModule}}}, tmp.path));
    testsupport::spit(recipe,
                      "id: base-version\n"
                      "edits:\n"
                      "  - module: basepkg\n"
                      "    function: version\n"
                      "    replace-body: return '13.0'\n");
  }
  sitepatch::util::RunResult sp(const testsupport::Venv& v, std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", v.root});
    return testsupport::run_sitepatch(args);
  }
};

}  // namespace

TEST_CASE("a base interpreter's module: planned and audited from a venv, applied only with --system, its history "
          "kept with the base", "[e2e]") {
  BaseEnv env;
  REQUIRE(env.one.run_python("import basepkg; print(basepkg.__file__)").out == env.file + "\n");
  std::string owner = "the base interpreter at " + env.base.root;

  // plan and audit find the base's module, and say whose it is.
  auto plan = env.sp(env.one, {"plan", env.recipe});
  INFO(plan.err);
  CHECK(plan.status == 0);
  CHECK(plan.err.find("where  basepkg/__init__.py is in " + env.base.site_packages + ", which belongs to " + owner +
                      ", not to this environment: every environment that uses it would change; apply needs "
                      "--system\n") != std::string::npos);
  CHECK(plan.out.find("+    return '13.0'") != std::string::npos);
  auto audit = env.sp(env.one, {"audit", "basepkg:version"});
  CHECK(audit.status == 0);
  CHECK(audit.out.find("[1] subprocess.run (process, error: ") != std::string::npos);
  CHECK(audit.out.find("basepkg:version") != std::string::npos);

  // Without --system nothing is written, and no history is made for the base.
  auto refused = env.sp(env.one, {"apply", env.recipe});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("sitepatch: error: refusing to write outside this environment: " +
                         env.base.site_packages + " (basepkg/__init__.py) belongs to " + owner) != std::string::npos);
  CHECK(testsupport::slurp(env.file) == kBaseModule);
  CHECK(!fs::exists(env.history));

  // With --system the history goes with the base.
  auto applied = env.sp(env.one, {"apply", "--system", env.recipe});
  INFO(applied.err);
  REQUIRE(applied.status == 0);
  CHECK(applied.err.find("sitepatch: --system: writing outside this environment (" + env.base.site_packages +
                         ", which belongs to " + owner + "); the history goes with that folder, to " + env.history +
                         ": every environment that uses it lists, verifies and rolls the patch back\n") !=
        std::string::npos);
  CHECK(applied.err.find("where  the history of base-version is in " + env.history + ", with " + owner + "\n") !=
        std::string::npos);
  CHECK(env.two.run_python("import basepkg; print(basepkg.version())").out == "13.0\n");
  CHECK(sitepatch::util::run({"git", "--git-dir", env.history, "log", "--format=%s"}).out ==
        "apply base-version\napply base-version: originals saved, writing\n");
  CHECK(!fs::exists(env.one.root + "/.sitepatch/HEAD"));

  // Another venv over the same base, and the base's own Python, see it as applied.
  auto listed = env.sp(env.two, {"list"});
  INFO(listed.out);
  CHECK(listed.status == 0);
  CHECK(listed.out.find("base-version  basepkg==1.0") != std::string::npos);
  CHECK(listed.out.find("  history " + env.history + ", with " + owner + "\n") != std::string::npos);
  auto json = nlohmann::json::parse(env.sp(env.two, {"--json", "list"}).out);
  CHECK(json["patches"][0]["history"] == env.history);
  CHECK(json["patches"][0]["shared_by"] == owner);
  CHECK(env.sp(env.two, {"verify"}).status == 0);
  auto own = testsupport::run_sitepatch({"--venv", env.base.python, "list"});
  CHECK(own.out.find("base-version  basepkg==1.0") != std::string::npos);
  CHECK(own.out.find("  history ") == std::string::npos);
  CHECK(env.sp(env.two, {"show", "base-version"}).out.find("+    return '13.0'") != std::string::npos);
  CHECK(env.sp(env.two, {"log"}).out.find("apply base-version") != std::string::npos);

  // Deleting the venv that applied it loses nothing; the other one rolls it back.
  fs::remove_all(env.one.root);
  CHECK(env.sp(env.two, {"verify", "base-version"}).status == 0);
  auto back = env.sp(env.two, {"rollback", "base-version"});
  INFO(back.err);
  REQUIRE(back.status == 0);
  CHECK(testsupport::slurp(env.file) == kBaseModule);
  CHECK(!fs::exists(env.base.site_packages + "/.sitepatch-patched.json"));
  CHECK(env.sp(env.two, {"list"}).out == "no patches applied in " + env.two.root + "\n");
  CHECK(testsupport::run_sitepatch({"--venv", env.base.python, "list"}).out ==
        "no patches applied in " + env.base.root + "\n");
}

TEST_CASE("a base interpreter's patch whose history was deleted is reported from every venv over it", "[e2e]") {
  BaseEnv env;
  REQUIRE(env.sp(env.one, {"apply", "--system", env.recipe}).status == 0);
  fs::remove_all(env.history);
  auto v = env.sp(env.two, {"verify"});
  CHECK(v.status == 3);
  CHECK(v.err.find("sitepatch: error: " + env.base.site_packages +
                   "/.sitepatch-patched.json says sitepatch patched files here (base-version), but there is no "
                   "history at " + env.history + " to tell what changed or undo it") != std::string::npos);
  CHECK(v.err.find("pip install --force-reinstall --no-deps basepkg==1.0") != std::string::npos);
}

TEST_CASE("apply --system refuses a recipe whose files would need two histories, and writes nothing", "[e2e]") {
  BaseEnv env;
  const char* own_module = "def hello():\n    return 'own'\n";
  testsupport::spit(env.one.site_packages + "/ownpkg.py", own_module);
  testsupport::spit(env.recipe,
                    "id: both\n"
                    "edits:\n"
                    "  - module: basepkg\n"
                    "    function: version\n"
                    "    replace-body: return '13.0'\n"
                    "  - module: ownpkg\n"
                    "    function: hello\n"
                    "    replace-body: return 'patched'\n");
  auto r = env.sp(env.one, {"apply", "--system", env.recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("sitepatch: error: recipe both changes files whose histories differ: " + env.one.site_packages +
                   "/ownpkg.py (this environment's history); " + env.file + " (history in " + env.history +
                   ", with the base interpreter at " + env.base.root + "). Each apply is all or nothing in one "
                   "history: split the recipe, one per folder; nothing was written\n") != std::string::npos);
  CHECK(testsupport::slurp(env.file) == kBaseModule);
  CHECK(testsupport::slurp(env.one.site_packages + "/ownpkg.py") == own_module);
}
