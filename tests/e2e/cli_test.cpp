// The command line's contract: usage errors exit 2 with a hint, colour only when
// asked or on a terminal, --json errors are JSON too.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

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

TEST_CASE("cli: -q leaves out apply's edit lines, not its outcome, and plan -q keeps them, they are its result",
          "[e2e][cli]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  auto plan = env.sp({"-q", "plan", recipe});
  CHECK(plan.status == 0);
  CHECK(plan.out.empty());
  CHECK(plan.err.find("will apply  flashinfer-dynamo  flashinfer.jit.cpp_ext:get_cuda_version") != std::string::npos);
  auto apply = env.sp({"-q", "apply", recipe});
  CHECK(apply.status == 0);
  CHECK(apply.out.empty());
  INFO(apply.err);
  CHECK(apply.err.find("will apply") == std::string::npos);
  CHECK(apply.err.rfind("applied flashinfer-dynamo: 2 file(s) changed", 0) == 0);
  auto again = env.sp({"-q", "apply", recipe});
  CHECK(again.err == "nothing to do: flashinfer-dynamo already applied\n");
}

TEST_CASE("cli: a failed check's output is shown escaped, tabs and newlines kept", "[e2e][cli]") {
  e2e::DemoEnv env;
  auto r = env.sp({"apply", "--check-with", "printf '\\033]0;pwned\\007bad\\tthing\\n'; exit 1",
                   e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(r.status == 1);
  INFO(r.err);
  CHECK(r.err.find("\n\\x1b]0;pwned\\x07bad\tthing\nsitepatch: check failed: ") != std::string::npos);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("cli: --help lists every command and the exit codes", "[e2e][cli]") {
  auto r = testsupport::run_sitepatch({"--help"});
  CHECK(r.status == 0);
  for (const char* c : {"plan", "apply", "list", "status", "verify", "rollback", "adopt", "log", "show", "audit", "rules", "explain"})
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
  // CLICOLOR_FORCE: colour into a pipe too, unless it is 0 or NO_COLOR says no; --color never wins.
  auto forced = testsupport::run_sitepatch({"--venv", env.venv.root, "plan", recipe}, {{"NO_COLOR", ""}, {"CLICOLOR_FORCE", "1"}});
  CHECK(forced.out.find("\x1b[32m+    return Version(torch.version.cuda)") != std::string::npos);
  auto zero = testsupport::run_sitepatch({"--venv", env.venv.root, "plan", recipe}, {{"NO_COLOR", ""}, {"CLICOLOR_FORCE", "0"}});
  CHECK(zero.out.find("\x1b[") == std::string::npos);
  auto both = testsupport::run_sitepatch({"--venv", env.venv.root, "plan", recipe}, {{"NO_COLOR", "1"}, {"CLICOLOR_FORCE", "1"}});
  CHECK(both.out.find("\x1b[") == std::string::npos);
  auto never = testsupport::run_sitepatch({"--venv", env.venv.root, "--color", "never", "plan", recipe},
                                          {{"NO_COLOR", ""}, {"CLICOLOR_FORCE", "1"}});
  CHECK(never.out.find("\x1b[") == std::string::npos);
}

TEST_CASE("with --json an error is a JSON document too", "[e2e][cli]") {
  e2e::DemoEnv env;
  std::string bad = env.recipe("bad.yaml", "id: x\nedits: 3\n");
  auto r = env.sp({"--json", "plan", bad});
  CHECK(r.status == 2);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ok"] == false);
  CHECK(j["exit_code"] == 2);
  CHECK(j["error"]["kind"] == "recipe");
  REQUIRE(j["error"]["diagnostics"].size() == 1);
  CHECK(j["error"]["diagnostics"][0]["line"] == 2);
  CHECK(j["error"]["diagnostics"][0]["file"] == bad);

  auto missing = env.sp({"--json", "show", "nope"});
  CHECK(missing.status == 1);
  auto m = nlohmann::json::parse(missing.out);
  CHECK(m["error"]["message"] == "no applied patch `nope` (nothing is applied)");
  CHECK(m["error"]["kind"] == "failed");
}

TEST_CASE("apply --dry-run prints the diff and writes nothing", "[e2e][cli]") {
  e2e::DemoEnv env;
  auto r = env.sp({"apply", "--dry-run", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(r.status == 0);
  CHECK(r.out == testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/patches/flashinfer-dynamo.diff"));
  CHECK(r.err.find("dry run: 2 file(s) would change; nothing was written") != std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("cli: a mistyped option gets the nearest, or the commands that have it", "[e2e][cli]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  auto near = env.sp({"apply", "--dryrun", recipe});
  CHECK(near.status == 2);
  CHECK(near.err ==
        "sitepatch: error: The following argument was not expected: --dryrun; did you mean `--dry-run`?\n"
        "Run 'sitepatch help apply' for usage.\n");
  auto elsewhere = env.sp({"plan", "--dryrun", recipe});
  CHECK(elsewhere.status == 2);
  CHECK(elsewhere.err ==
        "sitepatch: error: The following argument was not expected: --dryrun; `--dry-run` is an option of "
        "apply, reapply, sync, rollback, adopt, refresh, wheel, edit and capture, not of plan\n"
        "Run 'sitepatch help plan' for usage.\n");
  // An option the pre-scan does not know is CLI11's to name, not a command `never`.
  auto colour = testsupport::run_sitepatch({"--colur", "never", "list"});
  CHECK(colour.status == 2);
  CHECK(colour.err.find("unknown command") == std::string::npos);
  CHECK(colour.err.find("--colur") != std::string::npos);
  // The British spelling is the same option.
  auto british = env.sp({"--colour", "never", "list"});
  CHECK(british.status == 0);
  CHECK(british.out == "no patches applied in " + env.venv.root + "\n");
  auto both = env.sp({"-q", "-v", "list"});
  CHECK(both.status == 2);
  CHECK(both.err.find("--verbose excludes --quiet") != std::string::npos);
}

TEST_CASE("cli: help COMMAND is COMMAND --help, and a command's help lists the global options", "[e2e][cli]") {
  auto help = testsupport::run_sitepatch({"help", "apply"});
  CHECK(help.status == 0);
  CHECK(help.out == testsupport::run_sitepatch({"apply", "--help"}).out);
  for (const char* o : {"--dry-run", "--force", "Global options (before or after the command):", "--venv PATH",
                        "--host [USER@]HOST[:PORT]", "--json", "--state-dir DIR", "-q,--quiet"})
    CHECK(help.out.find(o) != std::string::npos);
  auto top = testsupport::run_sitepatch({"help"});
  CHECK(top.status == 0);
  CHECK(top.out == testsupport::run_sitepatch({"--help"}).out);
  // help --guide: the guides the binary carries, each byte for byte as in docs/guide/.
  auto guides = testsupport::run_sitepatch({"help", "--guide"});
  CHECK(guides.status == 0);
  CHECK(guides.out.find("Guides (sitepatch help --guide TOPIC):\n  audit         Audit\n") == 0);
  CHECK(guides.out.find("\n  upgrades      Upgrades\n") != std::string::npos);
  auto guide = testsupport::run_sitepatch({"help", "--guide", "upgrades"});
  CHECK(guide.status == 0);
  CHECK(guide.out == testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/docs/guide/upgrades.md"));
  auto no_guide = testsupport::run_sitepatch({"help", "--guide", "upgrade"});
  CHECK(no_guide.status == 2);
  CHECK(no_guide.err.find("sitepatch: error: no guide `upgrade`; did you mean `upgrades`? The guides: audit, capture, ") ==
        0);
  auto unknown = testsupport::run_sitepatch({"help", "aply"});
  CHECK(unknown.status == 2);
  CHECK(unknown.err == "sitepatch: error: unknown command `aply`; did you mean `apply`?\n"
                       "Run 'sitepatch --help' for the commands.\n");
}

TEST_CASE("colour on a terminal: a non-empty NO_COLOR turns it off, as TERM=dumb does, an empty one does not", "[e2e][cli]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  // script(1) gives the command a terminal, as a user's shell would.
  auto on_tty = [&](const std::string& vars) {
    std::string cmd = "env -u NO_COLOR " + vars + " " + std::string(SITEPATCH_BIN) + " --venv " + env.venv.root +
                      " plan -q " + recipe;
    return sitepatch::util::run({"script", "-qec", cmd, "/dev/null"}).out;
  };
  CHECK(on_tty("TERM=xterm").find("\x1b[32m") != std::string::npos);
  CHECK(on_tty("TERM=xterm NO_COLOR=").find("\x1b[32m") != std::string::npos);  // empty: no-color.org says keep colour
  CHECK(on_tty("TERM=xterm NO_COLOR=1").find("\x1b[") == std::string::npos);
  CHECK(on_tty("TERM=dumb").find("\x1b[") == std::string::npos);
}

TEST_CASE("recipes from a folder in name order and from standard input", "[e2e][cli]") {
  e2e::DemoEnv env;
  std::string dir = env.tmp.path + "/recipes.d";
  std::string founding = testsupport::slurp(e2e::bundled("flashinfer-dynamo.yaml"));
  testsupport::spit(dir + "/20-log.yml",
                    "id: quiet-log\nedits:\n  - module: flashinfer.jit.cpp_ext\n    ensure-import: import logging\n");
  testsupport::spit(dir + "/10-founding.yaml", founding);
  testsupport::spit(dir + "/README.md", "not a recipe\n");
  auto folder = env.sp({"--json", "plan", dir});
  INFO(folder.err);
  REQUIRE(folder.status == 0);
  auto doc = nlohmann::json::parse(folder.out);
  std::vector<std::string> ids;
  for (auto& e : doc["edits"]) ids.push_back(e["recipe"]);
  CHECK(ids == std::vector<std::string>{"flashinfer-dynamo", "flashinfer-dynamo", "quiet-log"});

  auto in = sitepatch::util::run({SITEPATCH_BIN, "--venv", env.venv.root, "plan", "-"}, founding);
  CHECK(in.status == 0);
  CHECK(in.out == env.sp({"plan", e2e::bundled("flashinfer-dynamo.yaml")}).out);
  auto applied = sitepatch::util::run({SITEPATCH_BIN, "--venv", env.venv.root, "apply", "-"}, founding);
  CHECK(applied.status == 0);
  CHECK(env.sp({"list"}).out.find("flashinfer-dynamo  flashinfer-python==0.5.3") != std::string::npos);

  auto twice = sitepatch::util::run({SITEPATCH_BIN, "--venv", env.venv.root, "plan", "-", "-"}, founding);
  CHECK(twice.status == 2);
  CHECK(twice.err.find("-: standard input (-) can be read only once") != std::string::npos);
  std::filesystem::create_directories(env.tmp.path + "/empty");
  auto empty = env.sp({"plan", env.tmp.path + "/empty"});
  CHECK(empty.status == 2);
  CHECK(empty.err == "sitepatch: error: invalid recipe\n" + env.tmp.path +
                         "/empty: no recipes (*.yaml, *.yml) in this folder\n");
  auto missing = env.sp({"plan", env.tmp.path + "/nope.yaml"});
  CHECK(missing.status == 2);
  CHECK(missing.err == "sitepatch: error: invalid recipe\n" + env.tmp.path + "/nope.yaml: cannot read recipe: " +
                           env.tmp.path + "/nope.yaml: No such file or directory\n");
}

TEST_CASE("cli: --version names the commit and what it was built against", "[e2e][cli]") {
  auto r = testsupport::run_sitepatch({"--version"});
  CHECK(r.status == 0);
  INFO(r.out);
  CHECK(std::regex_match(r.out, std::regex("sitepatch 0\\.1\\.0 \\(commit ([0-9a-f]{12}(-dirty)?|unknown)\\)\n"
                                           "libgit2 [0-9]+\\.[0-9]+\\.[0-9]+, tree-sitter language ABI [0-9]+, "
                                           "tree-sitter-python 0\\.23\\.6\n")));
  auto head = sitepatch::util::run({"git", "-C", SITEPATCH_SOURCE_DIR, "rev-parse", "--short=12", "HEAD"});
  if (head.status == 0) CHECK(r.out.find("(commit " + sitepatch::util::trim(head.out)) != std::string::npos);
}

// open_env starts libgit2 on a thread of its own (store/warm_up.hpp). A command that fails
// right after, before any history is read, used to return from main while that thread was
// still in git_libgit2_init, and exit's handlers crashed it (SIGSEGV or abort, a few runs
// in a hundred here).
TEST_CASE("cli: a command that fails before it reads the history exits with its own status, every time",
          "[e2e][cli]") {
  std::string log = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/fullgraph.txt";
  std::map<std::string, std::string> noenv = {{"VIRTUAL_ENV", ""}, {"CONDA_PREFIX", ""}};
  std::map<int, int> statuses;
  for (int i = 0; i < 150; ++i) ++statuses[testsupport::run_sitepatch({"explain", log}, noenv).status];
  CHECK(statuses == std::map<int, int>{{2, 150}});
}
