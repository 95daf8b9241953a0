// The command line's contract: usage errors exit 2 with a hint, colour only when
// asked or on a terminal, --json errors are JSON too.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

TEST_CASE("an unknown command exits 2 and suggests the nearest", "[e2e][cli]") {
  auto r = testsupport::run_sitepatch({"--venv", "/nowhere", "plna", "x.yaml"});
  CHECK(r.status == 2);
  CHECK(r.err ==
        "sitepatch: error: unknown command `plna`; did you mean `plan`?\n"
        "Run 'sitepatch --help' for the commands.\n");
  CHECK(r.out.empty());
}

TEST_CASE("bad options exit 2 naming the option", "[e2e][cli]") {
  auto color = testsupport::run_sitepatch({"--color", "purple", "list"});
  CHECK(color.status == 2);
  CHECK(color.err.find("--color: purple not in {auto,always,never}") != std::string::npos);
  auto none = testsupport::run_sitepatch({"apply"});
  CHECK(none.status == 2);
  CHECK(none.err.find("recipes is required") != std::string::npos);
  auto both = testsupport::run_sitepatch({"--venv", "/x", "rollback", "a", "--all"});
  CHECK(both.status == 2);
  CHECK(both.err == "sitepatch: error: rollback: give patch ids or --all, not both\n");
}

TEST_CASE("cli: --help lists every command and the exit codes", "[e2e][cli]") {
  auto r = testsupport::run_sitepatch({"--help"});
  CHECK(r.status == 0);
  for (const char* c : {"plan", "apply", "list", "status", "verify", "rollback", "log", "show", "audit", "rules", "explain"})
    CHECK(r.out.find(std::string("  ") + c + " ") != std::string::npos);
  CHECK(r.out.find("Exit codes: 0 done; 1 failed, nothing changed; 2 bad usage or invalid recipe;") !=
        std::string::npos);
  auto sub = testsupport::run_sitepatch({"apply", "--help"});
  CHECK(sub.status == 0);
  CHECK(sub.out.find("--dry-run") != std::string::npos);
  CHECK(sub.out.find("--force") != std::string::npos);
}

TEST_CASE("colour: never by default off a terminal, always on request, NO_COLOR wins auto", "[e2e][cli]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  auto plain = env.sp({"plan", recipe});
  CHECK(plain.out.find("\x1b[") == std::string::npos);
  auto always = testsupport::run_sitepatch({"--venv", env.venv.root, "--color", "always", "plan", recipe},
                                           {{"NO_COLOR", ""}});
  CHECK(always.out.find("\x1b[32m+    return Version(torch.version.cuda)") != std::string::npos);
  CHECK(always.out.find("\x1b[31m-    return Version(matches[0])") != std::string::npos);
}

TEST_CASE("with --json an error is a JSON document too", "[e2e][cli]") {
  e2e::DemoEnv env;
  std::string bad = env.recipe("bad.yaml", "id: x\nedits: 3\n");
  auto r = env.sp({"--json", "plan", bad});
  CHECK(r.status == 2);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == false);
  CHECK(j["exit_code"] == 2);
  REQUIRE(j["diagnostics"].size() == 1);
  CHECK(j["diagnostics"][0]["line"] == 2);
  CHECK(j["diagnostics"][0]["file"] == bad);

  auto missing = env.sp({"--json", "show", "nope"});
  CHECK(missing.status == 1);
  auto m = nlohmann::json::parse(missing.out);
  CHECK(m["error"] == "no applied patch `nope` (nothing is applied)");
}

TEST_CASE("apply --dry-run prints the diff and writes nothing", "[e2e][cli]") {
  e2e::DemoEnv env;
  auto r = env.sp({"apply", "--dry-run", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(r.status == 0);
  CHECK(r.out == testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/patches/flashinfer-dynamo.diff"));
  CHECK(r.err.find("dry run: 2 file(s) would change; nothing was written") != std::string::npos);
  CHECK(env.pristine());
}
