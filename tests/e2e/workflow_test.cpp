// The demo recipe end to end on a real venv: plan, apply, list, verify, show,
// log, rollback, and what Python sees after each.
#include <catch2/catch.hpp>

#include <pwd.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

using testsupport::slurp;

namespace {

const char* kWorkflowProbe =
    "import os; os.environ['CUDA_HOME'] = '/nonexistent'\n"
    "import flashinfer\n"
    "from flashinfer.jit.cpp_ext import get_cuda_version\n"
    "print(getattr(flashinfer.fp4_quantize, '_torchdynamo_disable', False))\n"
    "print(get_cuda_version())\n";

}  // namespace

TEST_CASE("plan prints the bundled recipe's exact diff and writes nothing", "[e2e]") {
  e2e::DemoEnv env;
  auto r = env.sp({"plan", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.err);
  REQUIRE(r.status == 0);
  // patches/ holds what the bundled recipe produces on its test package.
  CHECK(r.out == slurp(std::string(SITEPATCH_SOURCE_DIR) + "/patches/flashinfer-dynamo.diff"));
  CHECK(r.err.find("will apply  flashinfer-dynamo  flashinfer.jit.cpp_ext:get_cuda_version  "
                   "replace-body  (flashinfer/jit/cpp_ext.py:14)") != std::string::npos);
  CHECK(r.err.find("will apply  flashinfer-dynamo  flashinfer.fp4_quantization:fp4_quantize  "
                   "add-decorator  (flashinfer/fp4_quantization.py:12)") != std::string::npos);
  CHECK(env.pristine());
  CHECK_FALSE(std::filesystem::exists(env.venv.root + "/.sitepatch"));
}

TEST_CASE("apply changes what Python runs, rollback restores pip's bytes", "[e2e]") {
  e2e::DemoEnv env;
  // Before: the tracer-hostile path runs nvcc and fails without it.
  auto before = env.venv.run_python(kWorkflowProbe);
  CHECK(before.status != 0);
  CHECK(before.err.find("FileNotFoundError") != std::string::npos);

  auto r = env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("applied flashinfer-dynamo: 2 file(s) changed") != std::string::npos);

  auto after = env.venv.run_python(kWorkflowProbe);
  INFO(after.err);
  CHECK(after.status == 0);
  CHECK(after.out == "True\n12.8\n");

  auto list = env.sp({"list"});
  CHECK(list.status == 0);
  CHECK(list.out.find("flashinfer-dynamo") != std::string::npos);
  CHECK(list.out.find("flashinfer-python==0.5.3") != std::string::npos);
  CHECK(list.out.find("applied") != std::string::npos);

  auto verify = env.sp({"verify"});
  CHECK(verify.status == 0);
  CHECK(verify.out ==
        "flashinfer-dynamo  applied\n"
        "  flashinfer/jit/cpp_ext.py  applied\n"
        "  flashinfer/fp4_quantization.py  applied\n");

  // The history is a plain git repository.
  auto git = sitepatch::util::run(
      {"git", "--git-dir", env.venv.root + "/.sitepatch", "log", "--format=%s"});
  CHECK(git.status == 0);
  CHECK(git.out ==
        "apply flashinfer-dynamo\n"
        "apply flashinfer-dynamo: originals saved, writing\n");
  auto trailers = sitepatch::util::run(
      {"git", "--git-dir", env.venv.root + "/.sitepatch", "log", "-1", "--format=%B"});
  CHECK(trailers.out.find("Sitepatch-Recipe: flashinfer-dynamo") != std::string::npos);
  CHECK(trailers.out.find("Sitepatch-Distribution: flashinfer-python==0.5.3") != std::string::npos);
  auto patch = sitepatch::util::run(
      {"git", "--git-dir", env.venv.root + "/.sitepatch", "log", "-1", "-p", "--", "site"});
  CHECK(patch.out.find("+    return Version(torch.version.cuda)") != std::string::npos);

  auto rb = env.sp({"rollback", "flashinfer-dynamo"});
  INFO(rb.err);
  REQUIRE(rb.status == 0);
  CHECK(rb.err.find("rolled back flashinfer-dynamo: 2 file(s) restored") != std::string::npos);
  CHECK(env.pristine());
  CHECK(env.sp({"list"}).out == "no patches applied in " + env.venv.root + "\n");
  auto again = env.venv.run_python(kWorkflowProbe);
  CHECK(again.status != 0);
}

TEST_CASE("show prints a diff that git apply -R reverses inside site-packages", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  auto show = env.sp({"show", "flashinfer-dynamo"});
  REQUIRE(show.status == 0);
  CHECK(show.out == slurp(std::string(SITEPATCH_SOURCE_DIR) + "/patches/flashinfer-dynamo.diff"));
  std::string diff = env.tmp.path + "/show.diff";
  testsupport::spit(diff, show.out);
  auto rev = sitepatch::util::run(
      {"git", "-C", env.venv.site_packages, "apply", "-R", "--unsafe-paths", diff});
  INFO(rev.err);
  CHECK(rev.status == 0);
  CHECK(env.pristine());
}

TEST_CASE("applying twice changes nothing and says already applied", "[e2e]") {
  e2e::DemoEnv env;
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string after = env.read("flashinfer/jit/cpp_ext.py");
  auto again = env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(again.status == 0);
  CHECK(again.out.empty());
  CHECK(again.err.find("already applied  flashinfer-dynamo  flashinfer.jit.cpp_ext:get_cuda_version") !=
        std::string::npos);
  CHECK(again.err.find("nothing to do: flashinfer-dynamo already applied") != std::string::npos);
  CHECK(env.read("flashinfer/jit/cpp_ext.py") == after);
  auto git = sitepatch::util::run(
      {"git", "--git-dir", env.venv.root + "/.sitepatch", "rev-list", "--count", "HEAD"});
  CHECK(git.out == "2\n");
}

TEST_CASE("global options work before and after the command, --json is one document", "[e2e]") {
  e2e::DemoEnv env;
  auto r = testsupport::run_sitepatch(
      {"plan", e2e::bundled("flashinfer-dynamo.yaml"), "--json", "--venv", env.venv.root});
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == true);
  REQUIRE(j["edits"].size() == 2);
  CHECK(j["edits"][0]["state"] == "will apply");
  CHECK(j["edits"][0]["file"] == "flashinfer/jit/cpp_ext.py");
  CHECK(j["files"][0]["distribution"] == "flashinfer-python");
}

TEST_CASE("the environment is named by its root, its Python, or VIRTUAL_ENV", "[e2e]") {
  e2e::DemoEnv env;
  auto by_python = testsupport::run_sitepatch(
      {"--venv", env.venv.python, "plan", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(by_python.status == 0);
  auto by_env = testsupport::run_sitepatch({"plan", e2e::bundled("flashinfer-dynamo.yaml")},
                                           {{"VIRTUAL_ENV", env.venv.root}});
  CHECK(by_env.status == 0);
  CHECK(by_env.out == by_python.out);
  // Run from a folder with no .venv above it, no venv or conda environment active.
  testsupport::TempDir bare;
  auto none = sitepatch::util::run({"/usr/bin/env", "-C", bare.path, "-u", "VIRTUAL_ENV", "-u", "CONDA_PREFIX",
                                    "NO_COLOR=1", SITEPATCH_BIN, "plan", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(none.status == 2);
  CHECK(none.err ==
        "sitepatch: error: no environment given: pass --venv PATH (a venv root or its Python), activate a venv "
        "($VIRTUAL_ENV) or a conda environment ($CONDA_PREFIX), or run from a project with a .venv (none in " +
            bare.path + " or above)\n");
}

TEST_CASE("without --venv: $VIRTUAL_ENV, then $CONDA_PREFIX, then the nearest .venv above the current folder",
          "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  auto run_in = [&](const std::string& dir, std::vector<std::string> vars) {
    std::vector<std::string> argv = {"/usr/bin/env", "-C", dir, "-u", "VIRTUAL_ENV", "-u", "CONDA_PREFIX",
                                     "NO_COLOR=1"};
    argv.insert(argv.end(), vars.begin(), vars.end());
    argv.insert(argv.end(), {SITEPATCH_BIN, "-v", "plan", recipe});
    return sitepatch::util::run(argv);
  };
  // A uv or poetry project: the environment is .venv beside pyproject.toml, and
  // commands run from anywhere below it.
  testsupport::TempDir project;
  std::string dot_venv = project.path + "/.venv";
  REQUIRE(sitepatch::util::run({"cp", "-a", env.venv.root, dot_venv}).status == 0);
  std::filesystem::create_directories(project.path + "/src/app");
  auto below = run_in(project.path + "/src/app", {});
  INFO(below.err);
  CHECK(below.status == 0);
  CHECK(below.err.find("environment: " + dot_venv + " (a .venv in " + project.path + ")") != std::string::npos);
  CHECK(below.err.find("prefix " + dot_venv + ",") != std::string::npos);

  // A conda environment's $CONDA_PREFIX comes before a .venv, and $VIRTUAL_ENV before both.
  auto conda = run_in(project.path, {"CONDA_PREFIX=" + env.venv.root});
  CHECK(conda.err.find("environment: " + env.venv.root + " ($CONDA_PREFIX)") != std::string::npos);
  auto both = run_in(project.path, {"CONDA_PREFIX=/nonexistent", "VIRTUAL_ENV=" + env.venv.root});
  CHECK(both.err.find("environment: " + env.venv.root + " ($VIRTUAL_ENV)") != std::string::npos);
  CHECK(both.status == 0);
}

TEST_CASE("conda's base environment is a system Python: a .venv wins over it, and writing commands name what they found",
          "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  auto run_in = [&](const std::string& dir, std::vector<std::string> vars, std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/env", "-C", dir, "-u", "VIRTUAL_ENV", "-u", "CONDA_PREFIX",
                                     "-u", "CONDA_DEFAULT_ENV", "NO_COLOR=1"};
    argv.insert(argv.end(), vars.begin(), vars.end());
    argv.push_back(SITEPATCH_BIN);
    argv.insert(argv.end(), args.begin(), args.end());
    return sitepatch::util::run(argv);
  };
  testsupport::TempDir project;
  std::string dot_venv = project.path + "/.venv";
  REQUIRE(sitepatch::util::run({"cp", "-a", env.venv.root, dot_venv}).status == 0);
  // Conda's root prefix, as Miniforge installs it: conda-meta/ beside condabin/.
  testsupport::TempDir conda_root;
  std::string base = conda_root.path + "/miniforge3";
  REQUIRE(sitepatch::util::run({"cp", "-a", env.venv.root, base}).status == 0);
  std::filesystem::create_directories(base + "/conda-meta");
  std::filesystem::create_directories(base + "/condabin");

  SECTION("the nearest .venv wins over an active base, named by CONDA_DEFAULT_ENV or by its folders") {
    for (auto vars : std::vector<std::vector<std::string>>{{"CONDA_PREFIX=" + env.venv.root, "CONDA_DEFAULT_ENV=base"},
                                                           {"CONDA_PREFIX=" + base}}) {
      auto apply = run_in(project.path, vars, {"apply", recipe});
      INFO(apply.err);
      REQUIRE(apply.status == 0);
      // The first line says which environment was patched and why that one.
      CHECK(apply.err.substr(0, apply.err.find('\n')) == "environment: " + dot_venv + " (a .venv in " + project.path + ")");
      REQUIRE(run_in(project.path, vars, {"rollback", "--all"}).status == 0);
    }
    // Neither base prefix was touched.
    CHECK(run_in(project.path, {}, {"--venv", env.venv.root, "list"}).out.find("no patches applied") != std::string::npos);
    CHECK(run_in(project.path, {}, {"--venv", base, "list"}).out.find("no patches applied") != std::string::npos);
  }
  SECTION("$VIRTUAL_ENV wins over both; a named environment gets no such line") {
    auto apply = run_in(project.path, {"CONDA_PREFIX=" + base, "VIRTUAL_ENV=" + env.venv.root}, {"apply", recipe});
    REQUIRE(apply.status == 0);
    CHECK(apply.err.substr(0, apply.err.find('\n')) == "environment: " + env.venv.root + " ($VIRTUAL_ENV)");
    auto named = run_in(project.path, {}, {"--venv", env.venv.root, "rollback", "--all"});
    REQUIRE(named.status == 0);
    CHECK(named.err.find("environment: ") == std::string::npos);
    // --json keeps stderr to warnings: the document names the prefix.
    auto json = run_in(project.path, {}, {"--json", "apply", "--dry-run", recipe});
    CHECK(json.err.find("environment: ") == std::string::npos);
  }
  SECTION("with no .venv, a base environment is not chosen: the message says how to patch it") {
    testsupport::TempDir bare;
    auto none = run_in(bare.path, {"CONDA_PREFIX=" + base}, {"plan", recipe});
    CHECK(none.status == 2);
    CHECK(none.err ==
          "sitepatch: error: no environment given: pass --venv PATH (a venv root or its Python), activate a venv "
          "($VIRTUAL_ENV) or a conda environment ($CONDA_PREFIX), or run from a project with a .venv (none in " +
              bare.path + " or above); the active conda environment " + base +
              " is conda's base, which sitepatch treats as a system Python, as uv does: pass --venv " + base +
              " to patch it\n");
  }
  SECTION("a stale $VIRTUAL_ENV says where the path came from") {
    auto stale = run_in(project.path, {"VIRTUAL_ENV=/nonexistent/venv"}, {"apply", recipe});
    CHECK(stale.status == 2);
    CHECK(stale.err ==
          "sitepatch: error: no Python environment at /nonexistent/venv: /nonexistent/venv does not exist (the path "
          "is from $VIRTUAL_ENV; pass --venv PATH to choose another)\n");
  }
}

TEST_CASE("a system Python's dist-packages is an environment too (plan only)", "[e2e]") {
  // /usr/bin/python3 on Debian keeps packages in /usr/lib/python3/dist-packages; pip
  // is there (the test suite installs python3-pip). Plan reads and never writes.
  const std::string py = "/usr/bin/python3";
  auto has_pip = sitepatch::util::run({py, "-c", "import pip, sys; print(pip.__file__)"});
  if (has_pip.status != 0 || has_pip.out.find("/dist-packages/") == std::string::npos) {
    WARN("skipped: no Debian pip in /usr/bin/python3's dist-packages");
    return;
  }
  testsupport::TempDir tmp;
  std::string recipe = tmp.path + "/pip.yaml";
  testsupport::spit(recipe,
                    "id: pip-main\nedits:\n  - module: pip\n    function: main\n"
                    "    prepend-body: |\n      print('patched')\n");
  auto r = testsupport::run_sitepatch({"--venv", py, "--json", "plan", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["files"][0]["path"] == "pip/__init__.py");
  CHECK(j["files"][0]["distribution"] == "pip");
  CHECK(j["files"][0]["site_dir"].get<std::string>().find("dist-packages") != std::string::npos);
  CHECK(j["files"][0]["diff"].get<std::string>().find("+    print('patched')") != std::string::npos);
}

TEST_CASE("the history's commits are authored by whoever ran the command: git's identity, else login@host",
          "[e2e]") {
  e2e::DemoEnv env;
  testsupport::TempDir home;
  testsupport::spit(home.path + "/.gitconfig", "[user]\n\tname = Ada Lovelace\n\temail = ada@example.org\n");
  auto applied = testsupport::run_sitepatch(
      {"--venv", env.venv.root, "apply", e2e::bundled("flashinfer-dynamo.yaml")},
      {{"HOME", home.path}, {"XDG_CONFIG_HOME", home.path + "/.config"}, {"GIT_CONFIG_NOSYSTEM", "1"}});
  REQUIRE(applied.status == 0);
  std::string history = env.venv.root + "/.sitepatch";
  auto author = [&] {
    return sitepatch::util::run({"git", "--git-dir", history, "log", "-1", "--format=%an <%ae>"}).out;
  };
  CHECK(author() == "Ada Lovelace <ada@example.org>\n");

  // No identity anywhere: the login and the host.
  testsupport::TempDir bare;
  auto back = testsupport::run_sitepatch({"--venv", env.venv.root, "rollback", "--all"},
                                         {{"HOME", bare.path}, {"XDG_CONFIG_HOME", bare.path + "/.config"}});
  REQUIRE(back.status == 0);
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  if (sitepatch::util::run({"git", "config", "--system", "user.name"}).status != 0)
    CHECK(author() == std::string(::getpwuid(::geteuid())->pw_name) + " <" + ::getpwuid(::geteuid())->pw_name + "@" +
                          host + ">\n");
}
