// Issue 52 item 1: `sync` brings an environment to exactly a folder of recipes, with real
// pip: applied, put back after `pip install -U`, replaced when a recipe changes, rolled
// back when it leaves the folder; --check says whether it is in sync; a requires: that
// excludes the installed version leaves that recipe out (exit 3); a patch someone else
// changed stops it before it writes.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

using testsupport::WheelSpec;

// A tokenizer's settings module: 1.1 changes an unrelated line.
WheelSpec toktools(const std::string& version) {
  return {"toktools",
          version,
          {{"toktools/__init__.py", "__version__ = \"" + version + "\"\n"},
           {"toktools/limits.py",
            "def max_length():\n    return 512\n\n\ndef pad_id():\n    return 0\n\n\ndef stride():\n    return 128\n"}}};
}

const char* kLonger =
    "id: longer-context\nedits:\n  - module: toktools.limits\n    function: max_length\n    replace-body: |\n"
    "      return 4096\n";
const char* kPad =
    "id: pad-token\nrequires: [\"toktools>=1.0\"]\nedits:\n  - module: toktools.limits\n    function: pad_id\n"
    "    replace-body: |\n      return 2\n";

struct SyncEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string project, limits, wheel1, wheel2;
  SyncEnv()
      : venv(testsupport::Venv::create(tmp.path + "/venv")),
        project(tmp.path + "/project"),
        wheel1(testsupport::build_wheel(toktools("1.0"), tmp.path + "/wheels")),
        wheel2(testsupport::build_wheel(toktools("1.1"), tmp.path + "/wheels")) {
    venv.install(wheel1);
    limits = venv.site_packages + "/toktools/limits.py";
    testsupport::spit(project + "/patches/longer.yaml", kLonger);
    testsupport::spit(project + "/patches/pad.yaml", kPad);
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    return e2e::sp_in(project, venv.root, std::move(args));
  }
};

}  // namespace

TEST_CASE("sync: a folder of recipes applied, put back after pip install -U, replaced, rolled back, and --check",
          "[e2e][sync]") {
  SyncEnv env;
  std::string pip_bytes = testsupport::slurp(env.limits);
  auto check = env.sp({"sync", "--check"});
  CHECK(check.status == 3);
  CHECK(check.out == "apply      longer-context  not applied (patches/longer.yaml)\n"
                     "apply      pad-token       not applied (patches/pad.yaml)\n");
  CHECK(check.err.find("not in sync: sync would apply longer-context, pad-token; nothing was written\n") !=
        std::string::npos);
  CHECK(testsupport::slurp(env.limits) == pip_bytes);

  // No argument: ./patches.
  auto first = env.sp({"sync"});
  INFO(first.err);
  REQUIRE(first.status == 0);
  CHECK(first.err.find("synced: apply longer-context, pad-token; history in " + env.venv.root + "/.sitepatch\n") !=
        std::string::npos);
  CHECK(testsupport::slurp(env.limits).find("return 4096") != std::string::npos);
  CHECK(testsupport::slurp(env.limits).find("return 2\n") != std::string::npos);
  // Idempotent: nothing to do, nothing written, exit 0; --check agrees.
  auto again = env.sp({"sync", "patches"});
  CHECK(again.status == 0);
  CHECK(again.err.find("in sync: nothing to do\n") != std::string::npos);
  CHECK(env.sp({"sync", "--check", "-q"}).status == 0);
  auto log = env.sp({"log"});
  CHECK(log.out.find("  sync: apply longer-context, pad-token\n") != std::string::npos);
  CHECK(log.out.find("sync:") == log.out.rfind("sync:"));  // the second sync recorded nothing

  // pip install -U takes the edits away; sync puts them back on the new version.
  env.venv.upgrade(env.wheel2);
  CHECK(testsupport::slurp(env.limits).find("return 4096") == std::string::npos);
  auto after_upgrade = env.sp({"--json", "sync", "--check"});
  CHECK(after_upgrade.status == 3);
  auto j = nlohmann::json::parse(after_upgrade.out);
  CHECK(j["in_sync"] == false);
  CHECK(j["steps"][0] == nlohmann::json({{"id", "longer-context"},
                                          {"step", "reapply"},
                                          {"why", "toktools 1.0 -> 1.1 took its edits away"},
                                          {"recipe", "patches/longer.yaml"}}));
  REQUIRE(env.sp({"sync"}).status == 0);
  CHECK(testsupport::slurp(env.limits).find("return 4096") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);

  // The folder changes: one recipe leaves it, the other's content changes under its id.
  std::filesystem::remove(env.project + "/patches/pad.yaml");
  std::string changed = kLonger;
  changed.replace(changed.find("4096"), 4, "8192");
  testsupport::spit(env.project + "/patches/longer.yaml", changed);
  auto kept = env.sp({"sync", "--keep-others", "--dry-run"});
  CHECK(kept.status == 0);
  CHECK(kept.out == "replace    longer-context  its recipe changed since it was applied (patches/longer.yaml)\n"
                    "in sync    pad-token       applied, not in the set (--keep-others)\n");
  auto moved = env.sp({"--json", "sync"});
  INFO(moved.out + moved.err);
  REQUIRE(moved.status == 0);
  auto m = nlohmann::json::parse(moved.out);
  CHECK(m["written"] == true);
  CHECK(m["steps"][1]["step"] == "roll back");
  CHECK(m["files"] == nlohmann::json::array({"toktools/limits.py"}));
  std::string now = testsupport::slurp(env.limits);
  CHECK(now.find("return 8192") != std::string::npos);
  CHECK(now.find("def pad_id():\n    return 0\n") != std::string::npos);  // pip's line back
  auto list = nlohmann::json::parse(env.sp({"--json", "list"}).out);
  REQUIRE(list["patches"].size() == 1);
  CHECK(list["patches"][0]["id"] == "longer-context");
  // Rolled back whole, the file is pip's again.
  std::filesystem::remove(env.project + "/patches/longer.yaml");
  REQUIRE(env.sp({"sync"}).status == 0);
  auto upgraded = testsupport::slurp(env.limits);
  CHECK(upgraded.find("return 512") != std::string::npos);
  CHECK(upgraded.find("8192") == std::string::npos);
}

TEST_CASE("sync: a requires: that excludes the installed version is left out (exit 3), and a changed patch stops it",
          "[e2e][sync]") {
  SyncEnv env;
  testsupport::spit(env.project + "/patches/stride.yaml",
                    "id: old-stride\nrequires: [\"toktools<1.0\"]\nedits:\n  - module: toktools.limits\n"
                    "    function: stride\n    replace-body: |\n      return 64\n");
  auto r = env.sp({"sync"});
  INFO(r.err);
  CHECK(r.status == 3);
  CHECK(r.out.find("left out   old-stride      old-stride requires toktools<1.0; installed: toktools 1.0 "
                    "(patches/stride.yaml)\n") !=
        std::string::npos);
  CHECK(r.err.find("synced: apply longer-context, pad-token; ") != std::string::npos);
  CHECK(r.err.find("left out of the set: old-stride (exit 3)\n") != std::string::npos);
  CHECK(testsupport::slurp(env.limits).find("return 128") != std::string::npos);
  std::filesystem::remove(env.project + "/patches/stride.yaml");

  // Someone edits a patched file by hand; another recipe joins the set: nothing is written.
  std::string hand = testsupport::slurp(env.limits) + "\n\nDEBUG = True\n";
  testsupport::spit(env.limits, hand);
  testsupport::spit(env.project + "/patches/stride.yaml",
                    "id: new-stride\nedits:\n  - module: toktools.limits\n    function: stride\n"
                    "    replace-body: |\n      return 256\n");
  auto stopped = env.sp({"sync"});
  CHECK(stopped.status == 1);
  CHECK(stopped.err.find("sitepatch: error: sync stopped before writing anything: patches of the set changed by "
                         "someone else\n  longer-context: toktools/limits.py changed by someone else since it was "
                         "applied: sitepatch --venv " + env.venv.root + " adopt longer-context keeps that change as "
                         "the patch's, or sitepatch --venv " + env.venv.root + " rollback longer-context puts pip's "
                         "bytes back for the next sync\n") != std::string::npos);
  CHECK(testsupport::slurp(env.limits) == hand);
  // Adopted, the set syncs.
  REQUIRE(env.sp({"adopt", "longer-context"}).status == 0);
  REQUIRE(env.sp({"adopt", "pad-token"}).status == 0);
  auto synced = env.sp({"sync"});
  INFO(synced.err);
  CHECK(synced.status == 0);
  CHECK(testsupport::slurp(env.limits).find("return 256") != std::string::npos);
  CHECK(testsupport::slurp(env.limits).find("DEBUG = True") != std::string::npos);
  // No folder and no argument: a usage error naming what it looked for.
  std::filesystem::remove_all(env.project + "/patches");
  auto none = env.sp({"sync"});
  CHECK(none.status == 2);
  CHECK(none.err.find("name the recipes to sync (files or folders of them); with none, sync reads ./patches, which "
                      "is not here") != std::string::npos);
}
