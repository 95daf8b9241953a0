// Issue 52 item 3: `refresh ID` folds a hand change on top of an applied patch into its
// recipe (quilt's refresh), with real pip: it round-trips (refresh, rollback, apply the
// refreshed recipe on pip's bytes: the same files), writes the recipe file the history
// names when the caller owns it, and refuses what it cannot fold in.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

const char* kSched =
    "\"\"\"Learning-rate schedules.\"\"\"\n"
    "import math\n"
    "\n"
    "\n"
    "def warmup(step, total):\n"
    "    return min(1.0, step / total)\n"
    "\n"
    "\n"
    "def cosine(step, total):\n"
    "    return 0.5 * (1 + math.cos(math.pi * step / total))\n"
    "\n"
    "\n"
    "def linear(step, total):\n"
    "    return 1 - step / total\n";

const char* kRefreshRecipe =
    "# Our schedule fixes.\n"
    "id: sched-fix\n"
    "description: warmup never divides by zero\n"
    "requires: [\"lrsched>=1.0\"]\n"
    "edits:\n"
    "  - module: lrsched\n"
    "    function: warmup\n"
    "    replace-body: |\n"
    "      return min(1.0, step / max(total, 1))\n";

struct RefreshEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string recipe, module, pip_bytes;
  RefreshEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")), recipe(tmp.path + "/patches/sched.yaml") {
    venv.install(testsupport::build_wheel({"lrsched", "1.0", {{"lrsched/__init__.py", kSched}}}, tmp.path + "/w"));
    module = venv.site_packages + "/lrsched/__init__.py";
    pip_bytes = testsupport::slurp(module);
    testsupport::spit(recipe, kRefreshRecipe);
    REQUIRE(sp({"apply", recipe}).status == 0);
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    return e2e::sp_in(tmp.path, venv.root, std::move(args));
  }
  // The hand change: the patched body changed again, and a decorator on another function.
  void hand_edit() const {
    std::string text = testsupport::slurp(module);
    text.replace(text.find("max(total, 1)"), 13, "max(total, 10)");
    text.replace(text.find("def cosine"), 10, "@staticmethod\ndef cosine");
    testsupport::spit(module, text);
  }
};

}  // namespace

TEST_CASE("refresh: a hand change becomes the recipe's edits, and round-trips through rollback and apply",
          "[e2e][refresh]") {
  RefreshEnv env;
  CHECK(env.sp({"refresh", "sched-fix"}).err == "nothing to refresh: sched-fix's files are as its recipe leaves them\n");
  env.hand_edit();
  std::string edited = testsupport::slurp(env.module);

  // --dry-run: the recipe's diff; nothing written, nothing recorded.
  auto log_before = env.sp({"log"}).out;
  auto dry = env.sp({"refresh", "--dry-run", "sched-fix"});
  INFO(dry.err);
  REQUIRE(dry.status == 0);
  CHECK(dry.out.find("-      return min(1.0, step / max(total, 1))\n"
                     "+      return min(1.0, step / max(total, 10))\n"
                     "+  - module: lrsched\n"
                     "+    function: cosine\n"
                     "+    add-decorator: staticmethod\n") != std::string::npos);
  CHECK(dry.err == "dry run: sched-fix's recipe would change as above; nothing was written\n");
  CHECK(testsupport::slurp(env.recipe) == kRefreshRecipe);
  CHECK(env.sp({"log"}).out == log_before);

  // The recipe file the history names is the caller's: written in place, header kept.
  auto r = env.sp({"refresh", "sched-fix"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("refreshed sched-fix: 1 file(s) captured, recipe written to " + env.recipe) == 0);
  CHECK(testsupport::slurp(env.recipe) ==
        "# Our schedule fixes.\n"
        "id: sched-fix\n"
        "description: warmup never divides by zero\n"
        "requires: [\"lrsched>=1.0\"]\n"
        "edits:\n"
        "  - module: lrsched\n"
        "    function: warmup\n"
        "    replace-body: |\n"
        "      return min(1.0, step / max(total, 10))\n"
        "  - module: lrsched\n"
        "    function: cosine\n"
        "    add-decorator: staticmethod\n");
  CHECK(env.sp({"log"}).out.find("  refresh sched-fix: its recipe from the files as they are now\n") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);
  CHECK(env.sp({"show", "--recipe", "sched-fix"}).out == testsupport::slurp(env.recipe));
  CHECK(testsupport::slurp(env.module) == edited);

  // Round trip: rollback gives pip's bytes; the refreshed recipe on them gives the edited file.
  REQUIRE(env.sp({"rollback", "sched-fix"}).status == 0);
  CHECK(testsupport::slurp(env.module) == env.pip_bytes);
  REQUIRE(env.sp({"apply", env.recipe}).status == 0);
  CHECK(testsupport::slurp(env.module) == edited);
  CHECK(env.sp({"refresh", "sched-fix"}).err == "nothing to refresh: sched-fix's files are as its recipe leaves them\n");
}

TEST_CASE("refresh: -o elsewhere, a recipe file that is not the caller's, and a file another patch shares",
          "[e2e][refresh]") {
  RefreshEnv env;
  env.hand_edit();
  // The recipe the history names belongs to someone else: -o is asked for, nothing written.
  REQUIRE(::chown(env.recipe.c_str(), 65534, 65534) == 0);
  auto refused = env.sp({"refresh", "sched-fix"});
  CHECK(refused.status == 2);
  CHECK(refused.err == "sitepatch: error: refresh sched-fix: the history names no recipe file here that you own (" +
                           env.recipe + "): give -o FILE (or -o - for stdout); nothing was written\n");
  CHECK(env.sp({"verify"}).status == 3);  // still as the hand left it: changed by others
  auto json = env.sp({"--json", "refresh", "sched-fix", "-o", env.tmp.path + "/mine.yaml"});
  INFO(json.out + json.err);
  REQUIRE(json.status == 0);
  auto j = nlohmann::json::parse(json.out);
  CHECK(j["recipe_file"] == env.tmp.path + "/mine.yaml");
  CHECK(j["files"][0] == nlohmann::json({{"path", "lrsched/__init__.py"}, {"edits", 2}, {"whole", false},
                                         {"outside", nlohmann::json::array()}}));
  CHECK(testsupport::slurp(env.tmp.path + "/mine.yaml") == j["recipe"].get<std::string>());
  CHECK(testsupport::slurp(env.recipe) == kRefreshRecipe);
  // The history now names the new file.
  CHECK(nlohmann::json::parse(env.sp({"--json", "list"}).out)["patches"][0]["recipe"] == env.tmp.path + "/mine.yaml");

  // Another patch on the same file: its edits would become this one's. Refused.
  testsupport::spit(env.tmp.path + "/other.yaml", "id: lin-fix\nedits:\n  - module: lrsched\n    function: linear\n"
                                                  "    prepend-body: |\n      step = min(step, total)\n");
  REQUIRE(env.sp({"apply", env.tmp.path + "/other.yaml"}).status == 0);
  auto shared = env.sp({"refresh", "sched-fix", "-o", "-"});
  CHECK(shared.status == 1);
  CHECK(shared.err == "sitepatch: error: cannot refresh sched-fix: lin-fix also patches lrsched/__init__.py: its edits "
                      "would become sched-fix's; nothing was written\n");
}
