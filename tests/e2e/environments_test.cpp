// Kinds of environment beyond a pip-filled venv: distributions Debian ships as
// egg-info, a Python another package manager owns (PEP 668, dpkg), and an editable
// install whose files are the user's checkout.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "record_check.hpp"
#include "sitepatch/util/hash.hpp"

namespace fs = std::filesystem;

namespace {

const char* kJwt = "def decode(token):\n    return token\n";

std::string recipe_at(const std::string& dir, const std::string& text) {
  testsupport::spit(dir + "/r.yaml", text);
  return dir + "/r.yaml";
}

}  // namespace

TEST_CASE("an egg-info distribution as Debian ships it owns its package, and requires: sees it", "[e2e]") {
  testsupport::TempDir tmp;
  auto base = testsupport::base_interpreter(tmp.path + "/base");
  testsupport::spit(base.site_packages + "/PyJWT-2.6.0.egg-info/PKG-INFO",
                    "Metadata-Version: 2.1\nName: PyJWT\nVersion: 2.6.0\n");
  testsupport::spit(base.site_packages + "/PyJWT-2.6.0.egg-info/top_level.txt", "jwt\n");
  testsupport::spit(base.site_packages + "/jwt/api_jwt.py", kJwt);
  testsupport::spit(base.site_packages + "/jwt/__init__.py", "");
  std::string recipe = recipe_at(tmp.path,
                                 "id: jwt-fix\n"
                                 "requires: PyJWT>=2.0\n"
                                 "edits:\n"
                                 "  - module: jwt.api_jwt\n"
                                 "    function: decode\n"
                                 "    replace-body: return None\n");
  auto plan = testsupport::run_sitepatch({"--venv", base.python, "--json", "plan", recipe});
  INFO(plan.err);
  REQUIRE(plan.status == 0);
  auto doc = nlohmann::json::parse(plan.out);
  CHECK(doc["files"][0]["path"] == "jwt/api_jwt.py");
  CHECK(doc["files"][0]["distribution"] == "PyJWT");
  CHECK(doc["files"][0]["version"] == "2.6.0");

  // Applied, its record names the owner, so an upgrade would be noticed.
  REQUIRE(testsupport::run_sitepatch({"--venv", base.python, "apply", recipe}).status == 0);
  auto list = testsupport::run_sitepatch({"--venv", base.python, "list"});
  CHECK(list.out.find("jwt-fix  PyJWT==2.6.0") != std::string::npos);
  auto too_new = recipe_at(tmp.path + "/b",
                           "id: jwt-new\n"
                           "requires: PyJWT>=3\n"
                           "edits:\n"
                           "  - module: jwt\n"
                           "    ensure-import: import os\n");
  auto refused = testsupport::run_sitepatch({"--venv", base.python, "plan", too_new});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("installed: PyJWT 2.6.0") != std::string::npos);
  // A list: every one must hold, and each that does not is said.
  auto listed = recipe_at(tmp.path + "/c",
                          "id: jwt-both\n"
                          "requires:\n"
                          "  - PyJWT>=2.0\n"
                          "  - cryptography>=41\n"
                          "edits:\n"
                          "  - module: jwt\n"
                          "    ensure-import: import os\n");
  auto both = testsupport::run_sitepatch({"--venv", base.python, "plan", listed});
  CHECK(both.status == 1);
  CHECK(both.err.find("jwt-both requires cryptography>=41, which is not installed") != std::string::npos);
  CHECK(both.err.find("requires PyJWT") == std::string::npos);

  // audit --package reads the files of its top-level package.
  testsupport::spit(base.site_packages + "/jwt/tool.py", "import subprocess\n\ndef run():\n    subprocess.run(['x'])\n");
  auto audit = testsupport::run_sitepatch({"--venv", base.python, "audit", "--package", "PyJWT"});
  INFO(audit.out + audit.err);
  CHECK(audit.status == 0);
  CHECK(audit.out.find("jwt/tool.py:4:5: error: jwt.tool:run: subprocess.run [process]") != std::string::npos);
}

TEST_CASE("a Python marked EXTERNALLY-MANAGED is patched only with --system", "[e2e]") {
  testsupport::TempDir tmp;
  auto base = testsupport::base_interpreter(tmp.path + "/base");
  std::string lib = fs::path(base.site_packages).parent_path().string();
  testsupport::spit(lib + "/EXTERNALLY-MANAGED", "[externally-managed]\nError=use apt\n");
  testsupport::spit(base.site_packages + "/mod.py", kJwt);
  std::string recipe = recipe_at(tmp.path,
                                 "id: managed\n"
                                 "edits:\n"
                                 "  - module: mod\n"
                                 "    function: decode\n"
                                 "    replace-body: return None\n");
  std::string why = base.site_packages + "/mod.py belongs to a Python another package manager owns (" + lib +
                    "/EXTERNALLY-MANAGED): its next upgrade may replace the file";
  auto plan = testsupport::run_sitepatch({"--venv", base.python, "plan", recipe});
  CHECK(plan.status == 0);
  CHECK(plan.err.find("where  " + why + "; apply needs --system\n") != std::string::npos);
  auto refused = testsupport::run_sitepatch({"--venv", base.python, "apply", recipe});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("sitepatch: error: refusing to write files another package manager owns: " + why +
                         "; nothing was written. Give --system to patch them anyway (the history is kept in " +
                         base.root + "/.sitepatch)\n") != std::string::npos);
  CHECK(testsupport::slurp(base.site_packages + "/mod.py") == kJwt);
  REQUIRE(testsupport::run_sitepatch({"--venv", base.python, "apply", "--system", recipe}).status == 0);
  CHECK(testsupport::slurp(base.site_packages + "/mod.py").find("return None") != std::string::npos);

  // Through a venv over it, --system says yes to both: the shared folder and the marker.
  REQUIRE(testsupport::run_sitepatch({"--venv", base.python, "rollback", "managed"}).status == 0);
  auto over = testsupport::venv_from(base.python, tmp.path + "/over", true);
  auto through = testsupport::run_sitepatch({"--venv", over.root, "apply", "--system", recipe});
  INFO(through.err);
  CHECK(through.status == 0);
  CHECK(testsupport::slurp(base.site_packages + "/mod.py").find("return None") != std::string::npos);
  REQUIRE(testsupport::run_sitepatch({"--venv", over.root, "rollback", "managed"}).status == 0);
  CHECK(testsupport::slurp(base.site_packages + "/mod.py") == kJwt);

  // Inside a venv over it the marker does not apply (PEP 668), and its own files are its own.
  auto venv = testsupport::venv_from(base.python, tmp.path + "/venv", false);
  testsupport::spit(venv.site_packages + "/mod.py", kJwt);
  CHECK(testsupport::run_sitepatch({"--venv", venv.root, "apply", recipe}).status == 0);
}

TEST_CASE("a file dpkg owns in the system Python's own folders is refused without --system", "[e2e]") {
  const std::string target = "/usr/lib/python3/dist-packages/wheel/__init__.py";
  if (!fs::exists("/usr/bin/python3") || !fs::exists(target) ||
      !fs::exists("/var/lib/dpkg/info/python3-wheel.list")) {
    WARN("no Debian python3-wheel here: skipped");
    return;
  }
  testsupport::TempDir tmp;
  std::string before = testsupport::slurp(target);
  std::string recipe = recipe_at(tmp.path,
                                 "id: probe\n"
                                 "edits:\n"
                                 "  - module: wheel\n"
                                 "    ensure-import: import json as sitepatch_probe\n");
  // --state-dir keeps even the lock out of /var/lib/sitepatch.
  auto r = testsupport::run_sitepatch(
      {"--venv", "/usr/bin/python3", "--state-dir", tmp.path + "/state", "apply", recipe});
  CHECK(r.status == 1);
  CHECK(r.err.find("sitepatch: error: refusing to write files another package manager owns: " + target +
                   " belongs to the Debian package python3-wheel: the next apt upgrade of it replaces the file") !=
        std::string::npos);
  CHECK(testsupport::slurp(target) == before);
}

TEST_CASE("an editable install's checkout is never patched, even with --system", "[e2e]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  std::string checkout = tmp.path + "/my project";
  std::string module = checkout + "/src/edpkg/__init__.py";
  testsupport::spit(module, kJwt);
  // What pip install -e leaves: a .pth naming the checkout, direct_url.json saying editable.
  testsupport::spit(venv.site_packages + "/__editable__.edpkg-1.0.pth", checkout + "/src\n");
  std::string info = venv.site_packages + "/edpkg-1.0.dist-info";
  testsupport::spit(info + "/METADATA", "Metadata-Version: 2.1\nName: edpkg\nVersion: 1.0\n");
  testsupport::spit(info + "/RECORD", "__editable__.edpkg-1.0.pth,,\n");
  testsupport::spit(info + "/direct_url.json",
                    "{\"url\": \"file://" + tmp.path + "/my%20project\", \"dir_info\": {\"editable\": true}}\n");
  REQUIRE(venv.run_python("import edpkg; print(edpkg.__file__)").out == module + "\n");
  std::string recipe = recipe_at(tmp.path,
                                 "id: ed\n"
                                 "edits:\n"
                                 "  - module: edpkg\n"
                                 "    function: decode\n"
                                 "    replace-body: return None\n");
  std::string why = module + " is in " + checkout + ", the source checkout of edpkg==1.0 (installed editable, pip "
                    "install -e): patching it would edit that working tree; change the code there instead";
  auto plan = testsupport::run_sitepatch({"--venv", venv.root, "plan", recipe});
  CHECK(plan.status == 0);
  CHECK(plan.err.find("where  " + why + "; apply refuses it\n") != std::string::npos);
  for (auto flags : {std::vector<std::string>{"apply"}, std::vector<std::string>{"apply", "--system"}}) {
    std::vector<std::string> args = {"--venv", venv.root};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(recipe);
    auto r = testsupport::run_sitepatch(args);
    CHECK(r.status == 1);
    CHECK(r.err.find("sitepatch: error: refusing to patch an editable install: " + why + "; nothing was written\n") !=
          std::string::npos);
  }
  CHECK(testsupport::slurp(module) == kJwt);
  CHECK(!fs::exists(checkout + "/src/.sitepatch"));
}

namespace {

using e2e::kCheckRecord;

}  // namespace

TEST_CASE("pip's RECORD stays true: patched rows after apply, pip's rows after rollback, uninstall removes all",
          "[e2e]") {
  e2e::DemoEnv env;
  std::string record = env.site("flashinfer_python-0.5.3.dist-info/RECORD");
  REQUIRE(std::filesystem::exists(record));
  const std::string pips = testsupport::slurp(record);
  auto checked = [&] { return env.venv.run_python(kCheckRecord).out; };
  std::string clean = checked();
  REQUIRE(clean.find(" checked ") == 0);  // nothing bad before

  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  CHECK(checked() == clean);
  CHECK(testsupport::slurp(record) != pips);
  CHECK(env.sp({"verify"}).status == 0);

  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(testsupport::slurp(record) == pips);
  CHECK(env.pristine());

  // After apply, pip uninstall takes every file, and the next command says so.
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  env.venv.uninstall("flashinfer-python");
  CHECK(!std::filesystem::exists(env.site("flashinfer/jit/cpp_ext.py")));
  CHECK(!std::filesystem::exists(env.site("flashinfer_python-0.5.3.dist-info")));
  auto v = env.sp({"verify"});
  CHECK(v.status == 3);
  CHECK(v.out.find("flashinfer-python 0.5.3 was uninstalled") != std::string::npos);
}

namespace {

// A conda environment as conda leaves one: a Python in a prefix, and conda-meta/ with
// one NAME-VERSION-BUILD.json per package listing its files relative to the prefix. A
// package conda built without a dist-info is known only there.
void conda_package(const testsupport::Venv& env, const std::string& record, const std::string& site_below,
                   const std::vector<std::string>& files) {
  nlohmann::json doc = {{"name", record.substr(0, record.find('-'))}, {"files", nlohmann::json::array()}};
  for (auto& f : files) doc["files"].push_back(site_below + f);
  testsupport::spit(env.root + "/conda-meta/" + record, doc.dump(1) + "\n");
}

}  // namespace

TEST_CASE("conda-meta names the owner of a file no dist-info lists, and a conda update is an upgrade", "[e2e]") {
  e2e::DemoEnv env;
  std::string below = env.venv.site_packages.substr(env.venv.root.size() + 1) + "/";
  testsupport::spit(env.site("fastjit/__init__.py"), "def probe():\n    return 1\n");
  conda_package(env.venv, "fastjit-0.3.1-py_0.json", below, {"fastjit/__init__.py"});
  // conda's record of a pip-installed package does not change who owns it: the dist-info.
  conda_package(env.venv, "flashinfer-python-0.5.3-pypi_0.json", below, {"flashinfer/jit/cpp_ext.py"});
  testsupport::spit(env.venv.root + "/conda-meta/history", "==> 2026-11-30 <==\n");
  std::string recipe = env.recipe("fast.yaml",
                                  "id: fastjit-probe\n"
                                  "requires: fastjit>=0.3\n"
                                  "edits:\n"
                                  "  - module: fastjit\n"
                                  "    function: probe\n"
                                  "    replace-body: return 2\n");
  // Found as users find conda environments: $CONDA_PREFIX, no --venv.
  auto sp = [&](std::vector<std::string> args) {
    return testsupport::run_sitepatch(args, {{"CONDA_PREFIX", env.venv.root}, {"VIRTUAL_ENV", ""}});
  };
  auto plan = sp({"--json", "plan", recipe});
  INFO(plan.err);
  REQUIRE(plan.status == 0);
  auto doc = nlohmann::json::parse(plan.out);
  CHECK(doc["files"][0]["distribution"] == "fastjit");
  CHECK(doc["files"][0]["version"] == "0.3.1");
  auto text = sp({"plan", recipe});
  CHECK(text.err.find("where  fastjit/__init__.py is listed by conda's conda-meta/fastjit-0.3.1-py_0.json (fastjit "
                      "0.3.1), not by a dist-info: the next conda install or update of fastjit replaces it, "
                      "and status says so") != std::string::npos);
  auto founding = sp({"--json", "plan", e2e::bundled("flashinfer-dynamo.yaml")});
  REQUIRE(founding.status == 0);
  auto founding_doc = nlohmann::json::parse(founding.out);  // kept: the loop reads into it
  REQUIRE(!founding_doc["files"].empty());
  for (auto& f : founding_doc["files"]) CHECK(f["distribution"] == "flashinfer-python");

  REQUIRE(sp({"apply", recipe}).status == 0);
  CHECK(sp({"list"}).out.find("fastjit-probe  fastjit==0.3.1") != std::string::npos);
  CHECK(sp({"status"}).status == 0);

  // conda update: new bytes, a new record, the old one gone.
  testsupport::spit(env.site("fastjit/__init__.py"), "def probe():\n    return 4\n");
  fs::remove(env.venv.root + "/conda-meta/fastjit-0.3.1-py_0.json");
  conda_package(env.venv, "fastjit-0.4.0-py_0.json", below, {"fastjit/__init__.py"});
  auto st = sp({"status"});
  INFO(st.out + st.err);
  CHECK(st.status == 3);
  CHECK(st.out.find("fastjit 0.3.1 -> 0.4.0") != std::string::npos);
}

TEST_CASE("Python 3.8 and 3.13 venvs without pip (as uv makes them): plan, apply, verify, rollback", "[e2e]") {
  for (std::string minor : {"3.8", "3.13"}) {
    DYNAMIC_SECTION("Python " << minor) {
      testsupport::TempDir tmp;
      auto venv = testsupport::venv_from(testsupport::pyenv_python(minor), tmp.path + "/.venv", false);
      REQUIRE(!fs::exists(venv.root + "/bin/pip"));
      // uv writes its own installer name and its version into pyvenv.cfg.
      testsupport::spit(venv.root + "/pyvenv.cfg",
                        testsupport::slurp(venv.root + "/pyvenv.cfg") + "uv = 0.5.11\n");
      std::string wheels = tmp.path + "/wheels";
      venv.install({e2e::data_wheel("torch", "2.9.0", wheels), e2e::data_wheel("packaging", "24.0", wheels),
                    e2e::data_wheel("flashinfer-python", "0.5.3", wheels)});
      std::string clean = venv.run_python(kCheckRecord).out;
      auto before = e2e::read_tree(venv.site_packages + "/flashinfer");
      std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
      auto run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {"--venv", venv.root});
        return testsupport::run_sitepatch(args);
      };
      auto applied = run({"apply", recipe});
      INFO(applied.out + applied.err);
      REQUIRE(applied.status == 0);
      // That Python reads the patched module (the demo package itself needs 3.9 to import).
      auto probe = venv.run_python("import ast; s = open('" + venv.site_packages + "/flashinfer/jit/cpp_ext.py').read(); "
                                   "ast.parse(s); print('return Version(torch.version.cuda)' in s)");
      INFO(probe.err);
      CHECK(probe.out == "True\n");
      CHECK(venv.run_python(kCheckRecord).out == clean);  // RECORD still true
      CHECK(run({"verify"}).status == 0);
      REQUIRE(run({"rollback", "--all"}).status == 0);
      CHECK(e2e::read_tree(venv.site_packages + "/flashinfer") == before);
    }
  }
}

TEST_CASE("conda-meta's sha256_in_prefix follows the patched bytes, and rollback puts conda's record back",
          "[e2e]") {
  e2e::DemoEnv env;
  std::string below = env.venv.site_packages.substr(env.venv.root.size() + 1) + "/";
  std::string original = "def probe():\n    return 1\n";
  std::string other = "X = 1\n";
  testsupport::spit(env.site("fastjit/__init__.py"), original);
  testsupport::spit(env.site("fastjit/other.py"), other);
  // As conda writes a record: sorted keys, an indent of 2, a hash per file.
  nlohmann::json paths = nlohmann::json::array();
  for (auto& [f, text] : std::vector<std::pair<std::string, std::string>>{{"fastjit/__init__.py", original},
                                                                           {"fastjit/other.py", other}})
    paths.push_back({{"_path", below + f},
                     {"path_type", "hardlink"},
                     {"sha256", sitepatch::util::sha256_hex(text)},
                     {"sha256_in_prefix", sitepatch::util::sha256_hex(text)},
                     {"size_in_bytes", text.size()}});
  nlohmann::json doc = {{"name", "fastjit"},
                        {"version", "0.3.1"},
                        {"files", {below + "fastjit/__init__.py", below + "fastjit/other.py"}},
                        {"paths_data", {{"paths", paths}, {"paths_version", 1}}}};
  std::string record = env.venv.root + "/conda-meta/fastjit-0.3.1-py_0.json";
  testsupport::spit(record, doc.dump(2) + "\n");
  std::string before = testsupport::slurp(record);
  std::string recipe = env.recipe("fast.yaml", "id: fastjit-probe\nedits:\n  - module: fastjit\n    function: probe\n"
                                               "    replace-body: return 2\n");
  auto applied = env.sp({"apply", recipe});
  INFO(applied.err);
  REQUIRE(applied.status == 0);
  std::string patched = env.read("fastjit/__init__.py");
  REQUIRE(patched != original);
  auto after = nlohmann::json::parse(testsupport::slurp(record));
  // conda doctor's check: the hash in the prefix is the file's; the package's own stays.
  CHECK(after["paths_data"]["paths"][0]["sha256_in_prefix"] == sitepatch::util::sha256_hex(patched));
  CHECK(after["paths_data"]["paths"][0]["sha256"] == sitepatch::util::sha256_hex(original));
  CHECK(after["paths_data"]["paths"][1] == paths[1]);
  // Nothing else of the record moved.
  std::string expected = before;
  expected.replace(expected.find(sitepatch::util::sha256_hex(original), expected.find("sha256_in_prefix")), 64,
                   sitepatch::util::sha256_hex(patched));
  CHECK(testsupport::slurp(record) == expected);

  REQUIRE(env.sp({"rollback", "fastjit-probe"}).status == 0);
  CHECK(env.read("fastjit/__init__.py") == original);
  CHECK(testsupport::slurp(record) == before);
}

TEST_CASE("a symlinked .venv, used by its link and by its target in turn, is one environment: no moved notes",
          "[e2e][environments]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/real");
  fs::create_directory_symlink("real", tmp.path + "/.venv");
  venv.install(e2e::data_wheel("flashinfer-python", "0.5.3", tmp.path + "/wheels"));
  std::string recipe = tmp.path + "/r.yaml";
  testsupport::spit(recipe, "id: value\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: get_cuda_path\n"
                            "    replace-body: return '/opt/cuda'\n");
  auto by_link = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--venv", tmp.path + "/.venv"});
    return testsupport::run_sitepatch(args);
  };
  auto by_target = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--venv", tmp.path + "/real"});
    return testsupport::run_sitepatch(args);
  };
  REQUIRE(by_link({"apply", recipe}).status == 0);
  for (int round = 0; round < 2; ++round) {
    for (bool link : {false, true}) {
      auto r = link ? by_link({"verify"}) : by_target({"verify"});
      INFO(r.err);
      CHECK(r.status == 0);
      CHECK(r.err.find("was recorded for") == std::string::npos);
      CHECK(r.err.find("copied or moved") == std::string::npos);
    }
  }
  REQUIRE(by_target({"rollback", "value"}).status == 0);
  CHECK(by_link({"verify"}).out == "no patches applied in " + tmp.path + "/.venv\n");
}
