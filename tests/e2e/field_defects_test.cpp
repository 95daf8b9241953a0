// Defects found trying sitepatch on real packages and real workflows (issue 28): each
// case failed before its fix.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

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

TEST_CASE("replace refuses an `old` that would cut a name, naming the line, and a multi-line `new` at column 0 fits the body",
          "[e2e]") {
  e2e::DemoEnv env;
  // Issue 49 #7: `old` matched inside a longer token and said nothing. Its only place here
  // would cut `get_cuda_path`.
  std::string cut = env.recipe("cut.yaml", "id: cut\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                           "    function: get_cuda_version\n    replace:\n"
                                           "      old: nvcc = os.path.join(get_cuda\n"
                                           "      new: nvcc = os.path.join(find_cuda\n");
  auto r = env.sp({"plan", cut});
  CHECK(r.status == 1);
  CHECK(r.err.find("flashinfer.jit.cpp_ext:get_cuda_version  replace  (flashinfer/jit/cpp_ext.py:14): "
                   "`nvcc = os.path.join(get_cuda` is found in get_cuda_version only inside "
                   "`nvcc = os.path.join(get_cuda_path` (line 16), which it would cut: `old` must begin and end "
                   "where a name, number or operator does\n") != std::string::npos);
  CHECK(env.pristine());

  // The guide's way: lines written at column 0 in a `|` block replace a line of the
  // function body (it failed with "unexpected indent" at a later line).
  std::string block = env.recipe("block.yaml", "id: block\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                               "    function: get_cuda_version\n    replace:\n"
                                               "      old: |\n"
                                               "        txt = subprocess.check_output([nvcc, \"--version\"], text=True)\n"
                                               "      new: |\n"
                                               "        try:\n"
                                               "            txt = subprocess.check_output([nvcc, \"--version\"], text=True)\n"
                                               "        except OSError:\n"
                                               "            return Version(torch.version.cuda)\n");
  auto a = env.sp({"apply", block});
  CHECK(a.status == 0);
  CHECK(env.read("flashinfer/jit/cpp_ext.py").find(
            "    nvcc = os.path.join(get_cuda_path(), \"bin\", \"nvcc\")\n"
            "    try:\n"
            "        txt = subprocess.check_output([nvcc, \"--version\"], text=True)\n"
            "    except OSError:\n"
            "        return Version(torch.version.cuda)\n"
            "    matches = ") != std::string::npos);
  // Found applied again, by apply and by verify (which reads the history's copy).
  CHECK(env.sp({"apply", block}).err.find("already applied") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);
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

namespace {

// A recipe that edits `function` of cpp_ext and imports `module` for it.
std::string importing(const e2e::DemoEnv& env, const std::string& id, const std::string& function,
                      const std::string& module) {
  return env.recipe(id + ".yaml", "id: " + id + "\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: " +
                                      function + "\n    replace-body: return " + module + ".__name__\n"
                                      "    ensure-import: import " + module + "\n");
}

}  // namespace

TEST_CASE("imports ensured by several recipes in one module roll back in any order", "[e2e]") {
  e2e::DemoEnv env;
  std::vector<std::string> ids = {"uses-json", "uses-shutil", "uses-glob"};
  std::vector<std::string> recipes = {importing(env, ids[0], "get_cuda_path", "json"),
                                      importing(env, ids[1], "get_cuda_version", "shutil"),
                                      importing(env, ids[2], "load_cuda_ops", "glob")};
  SECTION("applied one by one, rolled back in apply order (oldest first)") {
    for (auto& r : recipes) REQUIRE(env.sp({"apply", r}).status == 0);
    std::string text = env.read("flashinfer/jit/cpp_ext.py");
    // Each import apart from the others: the module's own lines between them.
    CHECK(text.find("import json\nimport shutil") == std::string::npos);
    CHECK(text.find("import shutil\nimport json") == std::string::npos);
    for (size_t k = 0; k < ids.size(); ++k) {
      auto r = env.sp({"rollback", ids[k]});
      INFO(ids[k] << ": " << r.err);
      REQUIRE(r.status == 0);
      std::string now = env.read("flashinfer/jit/cpp_ext.py");
      // What stays is each later recipe's import, and none of the rolled back ones.
      CHECK(now.find("import " + std::string(k == 0 ? "json" : k == 1 ? "shutil" : "glob") + "\n") == std::string::npos);
      for (size_t later = k + 1; later < ids.size(); ++later)
        CHECK(now.find(std::string("import ") + (later == 1 ? "shutil" : "glob") + "\n") != std::string::npos);
    }
    CHECK(env.pristine());
  }
  SECTION("applied in one command, rolled back one at a time from the oldest") {
    REQUIRE(env.sp({"apply", recipes[0], recipes[1], recipes[2]}).status == 0);
    for (auto& id : ids) {
      auto r = env.sp({"rollback", id});
      INFO(id << ": " << r.err);
      REQUIRE(r.status == 0);
    }
    CHECK(env.pristine());
  }
}

TEST_CASE("a rollback that meets a later patch's edit names it and the order that works, not the whole file",
          "[e2e]") {
  e2e::DemoEnv env;
  // Two functions with no line between them: edits of the two touch, and (by statement)
  // are apart: the first recipe rolls back alone.
  std::string pip = "def first():\n    return 1\ndef second():\n    return 2\n";
  testsupport::spit(env.site("flashinfer/tight.py"), pip);
  std::string a = env.recipe("a.yaml", "id: body-a\nedits:\n  - module: flashinfer.tight\n    function: first\n"
                                       "    replace-body: return 10\n");
  std::string b = env.recipe("b.yaml", "id: deco-b\nedits:\n  - module: flashinfer.tight\n    function: second\n"
                                       "    add-decorator: staticmethod\n");
  REQUIRE(env.sp({"apply", a}).status == 0);
  REQUIRE(env.sp({"apply", b}).status == 0);
  auto alone = env.sp({"rollback", "body-a"});
  INFO(alone.err);
  CHECK(alone.status == 0);
  CHECK(env.read("flashinfer/tight.py") == "def first():\n    return 1\n@staticmethod\ndef second():\n    return 2\n");
  REQUIRE(env.sp({"rollback", "deco-b"}).status == 0);
  CHECK(env.read("flashinfer/tight.py") == pip);

  // A later recipe that changed an earlier one's own statement: that one cannot come out
  // alone.
  std::string x = "X = 1\ndef first():\n    return 1\n";
  testsupport::spit(env.site("flashinfer/tight.py"), x);
  std::string v = env.recipe("v.yaml", "id: val-a\nedits:\n  - module: flashinfer.tight\n    variable: X\n"
                                       "    set-value: '2'\n");
  std::string c = env.recipe("c.yaml", "id: more-c\nedits:\n  - module: flashinfer.tight\n"
                                       "    replace:\n      old: X = 2\n      new: X = 3\n");
  REQUIRE(env.sp({"apply", v}).status == 0);
  REQUIRE(env.sp({"apply", c}).status == 0);
  std::string both = env.read("flashinfer/tight.py");
  auto r = env.sp({"rollback", "val-a"});
  CHECK(r.status == 1);
  CHECK(r.err.find("val-a: cannot undo its edit of flashinfer/tight.py apart from more-c, applied after it, which "
                   "changed lines next to it; roll them back together, newest first: sitepatch --venv " +
                   env.venv.root + " rollback more-c val-a\n") != std::string::npos);
  CHECK(r.err.find("    <<<<<<< ours\n") != std::string::npos);
  CHECK(r.err.find("nothing was written") != std::string::npos);
  CHECK(env.read("flashinfer/tight.py") == both);
  // The order it names works.
  auto together = env.sp({"rollback", "more-c", "val-a"});
  INFO(together.err);
  CHECK(together.status == 0);
  CHECK(env.read("flashinfer/tight.py") == x);
}

TEST_CASE("list names every distribution a recipe patched, and --json lists them", "[e2e]") {
  e2e::DemoEnv env;
  std::string recipe = env.recipe("two.yaml", "id: two-dists\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                              "    function: get_cuda_path\n    replace-body: return '/opt/cuda'\n"
                                              "  - module: torch.version\n    variable: cuda\n    set-value: '\"12.9\"'\n");
  auto applied = env.sp({"apply", recipe});
  INFO(applied.err);
  REQUIRE(applied.status == 0);
  auto list = env.sp({"list"});
  CHECK(list.out.find("two-dists  flashinfer-python==0.5.3,torch==2.9.0      2  ") != std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "list"}).out);
  CHECK(j["patches"][0]["distribution"] == "flashinfer-python==0.5.3");
  CHECK(j["patches"][0]["distributions"] ==
        nlohmann::json::array({"flashinfer-python==0.5.3", "torch==2.9.0"}));
}
