// audit on the layouts of real packages (tests/data/packages/rp-layouts-1.0) through
// the real binary: chains through a subpackage bound in __init__, a name that resolves
// in a circle reported loudly, the two modes agreeing on what is performed, answers
// that say how complete they are, and the CI gate (--fail-on, --strict, --ignore,
// --format sarif).
#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

struct LayoutsEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  LayoutsEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    venv.install({e2e::data_wheel("rp-layouts", "1.0", tmp.path + "/wheels")});
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
  std::string file(const std::string& name, const std::string& text) const {
    testsupport::spit(tmp.path + "/" + name, text);
    return tmp.path + "/" + name;
  }
};

}  // namespace

TEST_CASE("audit follows a subpackage its package's __init__ binds", "[e2e][audit]") {
  LayoutsEnv env;
  // The minimal case: rp/__init__.py says `from . import jit`.
  auto r = env.sp({"audit", "rp.jit.fp4:gen"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "rp.jit.fp4:gen reaches 1 flagged operation\n"
        "\n"
        "[1] subprocess.check_output (process, error: spawns a process, which dynamo cannot trace) [subprocess: docs/guide/rules.md#subprocess]\n"
        "    rp.jit.fp4:gen      rp/jit/fp4.py:5\n"
        "    rp.jit.cpp_ext:ver  rp/jit/cpp_ext.py:5\n"
        "\n"
        "2 functions in 4 modules walked\n");
}

TEST_CASE("a name that resolves in a circle is reported without -v", "[e2e][audit]") {
  LayoutsEnv env;
  auto r = env.sp({"audit", "rp.layouts:via_circle"});
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "rp.layouts:via_circle: no flagged operation found in 1 function walked; 1 call could not be followed "
        "(-v lists them), so this is not proof there is none\n"
        "warning: 1 call resolves in a circle, which sitepatch cannot follow (a limit of this tool; if the package "
        "imports, please report it):\n"
        "    rp/layouts.py:46  rp.layouts:via_circle  spin  (resolves in a circle: rp.circle_b.spin -> "
        "rp.circle_a.spin)\n");
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "rp.layouts:via_circle"}).out);
  CHECK(j["limits"].size() == 1);
  CHECK(j["limits"][0]["why"] == "resolves in a circle: rp.circle_b.spin -> rp.circle_a.spin");
}

TEST_CASE("audit MODULE:FUNCTION and audit --package flag the same operations", "[e2e][audit]") {
  LayoutsEnv env;
  auto walk = nlohmann::json::parse(env.sp({"--json", "audit", "rp.alarms:everything"}).out);
  auto scan = nlohmann::json::parse(env.sp({"--json", "audit", "--module", "rp.alarms"}).out);
  std::set<std::string> walked, scanned;
  for (auto& c : walk["chains"]) {
    auto& last = c["steps"].back();
    walked.insert(last["file"].get<std::string>() + ":" + std::to_string(last["line"].get<int>()) + " " +
                  c["operation"].get<std::string>());
  }
  for (auto& f : scan["files"])
    for (auto& x : f["findings"])
      scanned.insert(f["file"].get<std::string>() + ":" + std::to_string(x["line"].get<int>()) + " " +
                     x["operation"].get<std::string>());
  // Not the except clause, the constants, isinstance/issubclass, the annotations, nor
  // the exception raised.
  // `saved_open = open; saved_open(path)` calls open.
  CHECK(scanned == std::set<std::string>{"rp/alarms.py:10 subprocess.check_output", "rp/alarms.py:23 subprocess.run",
                                         "rp/alarms.py:24 open", "rp/alarms.py:25 subprocess.Popen",
                                         "rp/alarms.py:42 open"});
  CHECK(walked == scanned);
}

TEST_CASE("an answer that found nothing says how complete it is", "[e2e][audit]") {
  LayoutsEnv env;
  auto r = env.sp({"audit", "rp.quiet:unknown_calls"});
  CHECK(r.status == 0);
  CHECK(r.out ==
        "rp.quiet:unknown_calls: no flagged operation found in 2 functions walked; 2 calls could not be followed "
        "(-v lists them), so this is not proof there is none\n");
  auto v = env.sp({"-v", "audit", "rp.quiet:unknown_calls"});
  CHECK(v.out ==
        "rp.quiet:unknown_calls: no flagged operation found in 2 functions walked; 2 calls could not be followed "
        "(listed below), so this is not proof there is none\n"
        "2 calls could not be followed:\n"
        "    rp/quiet.py:7  rp.quiet:unknown_calls  handlers[name]  (an item whose value is not known)\n"
        "    rp/quiet.py:10  rp.quiet:unknown_calls  getattr(obj, name)  (getattr with a name known only at run time)\n");
  // obj.run is object().run: a name of builtins.object, no code of the program: followed.
  CHECK(env.sp({"audit", "rp.quiet:resolved"}).out ==
        "rp.quiet:resolved: no flagged operation found in 2 functions walked; every call on the way was resolved\n");
  // -q still says it: silence would read as "nothing there".
  CHECK(env.sp({"-q", "audit", "rp.quiet:resolved"}).out ==
        "rp.quiet:resolved: no flagged operation found in 2 functions walked; every call on the way was resolved\n");

  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "rp.quiet:unknown_calls"}).out);
  CHECK(j["conclusion"] ==
        "rp.quiet:unknown_calls: no flagged operation found in 2 functions walked; 2 calls could not be followed "
        "(-v lists them), so this is not proof there is none");
  CHECK(j["complete"] == false);
  CHECK(j["unfollowed"] == 2);
  CHECK(nlohmann::json::parse(env.sp({"--json", "audit", "rp.quiet:resolved"}).out)["complete"] == true);

  // A scan that finds nothing says what it cannot see.
  auto s = env.sp({"audit", "--module", "rp.jit.fp4"});
  CHECK(s.out ==
        "no flagged call written directly in 1 file (0 parsed after the text pre-filter); a scan does not follow "
        "calls into other functions (audit MODULE:FUNCTION does), so this is not proof there is none\n");
}

TEST_CASE("audit: --fail-on and --strict make it a CI gate", "[e2e][audit]") {
  LayoutsEnv env;
  // subprocess is an error, os.path.exists an info.
  auto r = env.sp({"audit", "rp.jit.fp4:gen", "--fail-on", "error"});
  CHECK(r.status == 3);
  CHECK(r.err == "sitepatch: 1 finding at or above error (--fail-on error)\n");
  CHECK(env.sp({"audit", "rp.quiet:checks", "--fail-on", "warning"}).status == 0);
  CHECK(env.sp({"audit", "rp.quiet:checks", "--fail-on", "info"}).status == 3);
  CHECK(env.sp({"audit", "--module", "rp.jit", "--fail-on", "error"}).status == 3);
  CHECK(env.sp({"audit", "--module", "rp.quiet", "--fail-on", "warning"}).status == 0);

  // --strict: an incomplete answer needs attention too.
  CHECK(env.sp({"audit", "rp.quiet:unknown_calls", "--fail-on", "error"}).status == 0);
  auto s = env.sp({"audit", "rp.quiet:unknown_calls", "--strict"});
  CHECK(s.status == 3);
  CHECK(s.err == "sitepatch: 2 calls could not be followed (--strict)\n");
  CHECK(env.sp({"audit", "rp.quiet:resolved", "--strict"}).status == 0);

  auto bad = env.sp({"audit", "rp.jit.fp4:gen", "--fail-on", "fatal"});
  CHECK(bad.status == 2);
}

TEST_CASE("an ignore file accepts reviewed findings, each with a reason", "[e2e][audit]") {
  LayoutsEnv env;
  std::string ok = env.file("ignore.yaml",
                            "ignore:\n"
                            "  - rule: subprocess\n"
                            "    function: rp.jit.cpp_ext:ver\n"
                            "    reason: nvcc is only asked once, before compiling\n"
                            "  - rule: open\n"
                            "    at: rp/alarms.py:24\n"
                            "    reason: reads the user's own files\n");
  auto r = env.sp({"audit", "rp.jit.fp4:gen", "--ignore", ok, "--fail-on", "error"});
  CHECK(r.status == 0);
  CHECK(r.out ==
        "rp.jit.fp4:gen: no flagged operation found in 2 functions walked (1 accepted by the ignore file); every "
        "call on the way was resolved\n");
  auto v = env.sp({"-v", "audit", "rp.jit.fp4:gen", "--ignore", ok});
  CHECK(v.out ==
        "rp.jit.fp4:gen: no flagged operation found in 2 functions walked (1 accepted by the ignore file); every "
        "call on the way was resolved\n"
        "1 finding accepted by the ignore file:\n"
        "    rp/jit/cpp_ext.py:5  rp.jit.cpp_ext:ver  subprocess.check_output  (" + ok +
            ":2: nvcc is only asked once, before compiling)\n");
  auto s = env.sp({"audit", "--module", "rp.alarms", "--ignore", ok});
  CHECK(s.out ==
        "rp/alarms.py:10:15: error: rp.alarms:not_performed: subprocess.check_output [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "rp/alarms.py:23:21: error: rp.alarms:performed: subprocess.run [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "rp/alarms.py:25:10: error: rp.alarms:performed: subprocess.Popen [process] [subprocess: docs/guide/rules.md#subprocess]\n"
        "rp/alarms.py:42:12: warning: rp.alarms:renamed: open [file-io] [open: docs/guide/rules.md#open]\n"
        "4 flagged calls in 3 functions in 1 file of 1 (1 parsed after the text pre-filter) (1 more accepted by "
        "the ignore file)\n");

  std::string bad = env.file("bad.yaml",
                             "ignore:\n"
                             "  - rule: subprocess\n"
                             "    function: rp.jit.cpp_ext.ver\n"
                             "  - rule: open\n"
                             "    at: rp/alarms.py\n"
                             "    reason: x\n"
                             "  - rule: opne\n"
                             "    at: rp/alarms.py:24\n"
                             "    resaon: x\n");
  auto e = env.sp({"audit", "rp.jit.fp4:gen", "--ignore", bad});
  CHECK(e.status == 2);
  CHECK(e.err == "sitepatch: error: invalid ignore file\n" + bad +
                     ":2:5: entry 1: missing required key `reason` (why this finding is accepted)\n" + bad +
                     ":3:15: entry 1: `function` must be MODULE:FUNCTION, got `rp.jit.cpp_ext.ver`\n" + bad +
                     ":5:9: entry 2: `at` must be FILE.py:LINE, got `rp/alarms.py`\n" + bad +
                     ":7:5: entry 3: missing required key `reason` (why this finding is accepted)\n" + bad +
                     ":7: rule `opne` is not loaded; did you mean `open`?\n" + bad +
                     ":9:5: entry 3: unknown key `resaon`; did you mean `reason`?\n");
  // Every file's problems in one message, the malformed and the unknown rules together.
  std::string second = env.file("second.yaml", "ignore:\n  - rule: subprocesss\n    at: rp/x.py:1\n    reason: y\n");
  e = env.sp({"audit", "rp.jit.fp4:gen", "--ignore", bad, "--ignore", second});
  CHECK(e.status == 2);
  CHECK(e.err.find(bad + ":9:5: entry 3: unknown key `resaon`; did you mean `reason`?\n" + second +
                   ":2: rule `subprocesss` is not loaded; did you mean `subprocess`?\n") != std::string::npos);
  std::string typo = env.file("typo.yaml", "ignore:\n  - rule: opne\n    at: rp/alarms.py:24\n    reason: x\n");
  e = env.sp({"audit", "rp.jit.fp4:gen", "--ignore", typo});
  CHECK(e.status == 2);
  CHECK(e.err == "sitepatch: error: invalid ignore file\n" + typo + ":2: rule `opne` is not loaded; did you mean `open`?\n");
}

TEST_CASE("audit: --format sarif prints a SARIF 2.1.0 log", "[e2e][audit]") {
  LayoutsEnv env;
  std::string ok = env.file("ignore.yaml",
                            "ignore:\n  - rule: open\n    at: rp/alarms.py:24\n    reason: reads the user's files\n");
  for (auto args : {std::vector<std::string>{"audit", "rp.alarms:everything", "--format", "sarif", "--ignore", ok},
                    std::vector<std::string>{"audit", "--module", "rp.alarms", "--format", "sarif", "--ignore", ok}}) {
    auto r = env.sp(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    // The shape code-scanning dashboards read (SARIF 2.1.0, the properties they require).
    CHECK(j["version"] == "2.1.0");
    CHECK(j["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json");
    REQUIRE(j["runs"].size() == 1);
    auto& run = j["runs"][0];
    CHECK(run["tool"]["driver"]["name"] == "sitepatch");
    auto& rules = run["tool"]["driver"]["rules"];
    REQUIRE(rules.is_array());
    for (auto& rule : rules) {
      CHECK(rule["id"].is_string());
      CHECK(rule["shortDescription"]["text"].is_string());
      CHECK(std::set<std::string>{"error", "warning", "note"}.count(rule["defaultConfiguration"]["level"]));
    }
    // One base a site folder (this venv has one); each location names its own.
    CHECK(run["originalUriBaseIds"] ==
          nlohmann::json{{"SITE1", {{"uri", "file://" + env.venv.site_packages + "/"}}}});
    auto& results = run["results"];
    REQUIRE(results.size() == 5);
    std::set<std::string> seen;
    for (auto& res : results) {
      CHECK(rules[res["ruleIndex"].get<size_t>()]["id"] == res["ruleId"]);
      CHECK(std::set<std::string>{"error", "warning", "note"}.count(res["level"]));
      CHECK(res["message"]["text"].is_string());
      auto& loc = res["locations"][0]["physicalLocation"];
      CHECK(loc["artifactLocation"]["uriBaseId"] == "SITE1");
      CHECK(loc["region"]["startLine"].get<int>() >= 1);
      seen.insert(loc["artifactLocation"]["uri"].get<std::string>() + ":" +
                  std::to_string(loc["region"]["startLine"].get<int>()) + " " + res["ruleId"].get<std::string>() +
                  (res.contains("suppressions") ? " suppressed: " + res["suppressions"][0]["justification"].get<std::string>() : ""));
    }
    CHECK(seen == std::set<std::string>{"rp/alarms.py:10 subprocess", "rp/alarms.py:23 subprocess",
                                        "rp/alarms.py:24 open suppressed: reads the user's files",
                                        "rp/alarms.py:25 subprocess", "rp/alarms.py:42 open"});
  }
}

TEST_CASE("an ignore entry that accepted no finding is reported, and fails --strict", "[e2e][audit]") {
  LayoutsEnv env;
  const std::string tail = " accepted no finding; the code it was written for has changed, or it names the wrong place";
  std::string f = env.file("ignore.yaml",
                           "ignore:\n"
                           "  - rule: subprocess\n"
                           "    function: rp.jit.cpp_ext:ver\n"
                           "    reason: nvcc is only asked once\n"
                           "  - rule: open\n"
                           "    function: rp.jit.fp4:gen\n"
                           "    reason: walked, but opens nothing\n"
                           "  - rule: subprocess\n"
                           "    at: rp/jit/cpp_ext.py:4\n"
                           "    reason: the call moved to line 5\n"
                           "  - rule: open\n"
                           "    at: rp/alarms.py:24\n"
                           "    reason: not walked from rp.jit.fp4:gen, so not judged by it\n");
  // Entries 2 and 3 name functions and lines the walk read; entry 4 another entry's code.
  auto r = env.sp({"audit", "rp.jit.fp4:gen", "--ignore", f});
  CHECK(r.status == 0);
  CHECK(r.out ==
        "rp.jit.fp4:gen: no flagged operation found in 2 functions walked (1 accepted by the ignore file); every "
        "call on the way was resolved\n" +
            f + ":5: warning: ignore entry for rule `open` in rp.jit.fp4:gen" + tail + "\n" + f +
            ":8: warning: ignore entry for rule `subprocess` at rp/jit/cpp_ext.py:4" + tail + "\n");
  // --strict: an ignore file that says more than the code is not a clean answer.
  auto s = env.sp({"audit", "rp.jit.fp4:gen", "--ignore", f, "--strict"});
  CHECK(s.status == 3);
  CHECK(s.err == "sitepatch: 2 ignore entries accepted no finding (--strict)\n");
  std::string q = env.file("quiet.yaml",
                           "ignore:\n  - rule: subprocess\n    function: rp.quiet:unknown_calls\n    reason: x\n");
  auto both = env.sp({"audit", "rp.quiet:unknown_calls", "--ignore", q, "--strict"});
  CHECK(both.status == 3);
  CHECK(both.err == "sitepatch: 2 calls could not be followed and 1 ignore entry accepted no finding (--strict)\n");

  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "rp.jit.fp4:gen", "--ignore", f}).out);
  REQUIRE(j["unused_ignores"].size() == 2);
  CHECK(j["unused_ignores"][0] == nlohmann::json{{"ignore_file", f},
                                                  {"line", 5},
                                                  {"rule", "open"},
                                                  {"function", "rp.jit.fp4:gen"},
                                                  {"reason", "walked, but opens nothing"},
                                                  {"message", f + ":5: warning: ignore entry for rule `open` in "
                                                                  "rp.jit.fp4:gen" + tail}});
  CHECK(j["unused_ignores"][1]["at"] == "rp/jit/cpp_ext.py:4");
  auto sarif = nlohmann::json::parse(env.sp({"audit", "rp.jit.fp4:gen", "--ignore", f, "--format", "sarif"}).out);
  auto& notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"];
  REQUIRE(notes.size() == 2);
  CHECK(notes[0]["level"] == "warning");
  CHECK(notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 5);

  // A scan judges the entries about the files it read: here a function rp.alarms lacks.
  std::string g = env.file("scan.yaml",
                           "ignore:\n"
                           "  - rule: open\n"
                           "    at: rp/alarms.py:24\n"
                           "    reason: reads the user's files\n"
                           "  - rule: subprocess\n"
                           "    function: rp.alarms:not_preformed\n"
                           "    reason: a typo\n"
                           "  - rule: subprocess\n"
                           "    function: rp.jit.cpp_ext:ver\n"
                           "    reason: not scanned by --module rp.alarms\n");
  auto m = env.sp({"-q", "audit", "--module", "rp.alarms", "--ignore", g, "--strict"});
  CHECK(m.status == 3);
  CHECK(m.err == "sitepatch: 1 ignore entry accepted no finding (--strict)\n");
  CHECK(env.sp({"audit", "--module", "rp.alarms", "--ignore", g}).out.find(
            g + ":5: warning: ignore entry for rule `subprocess` in rp.alarms:not_preformed" + tail + "\n") !=
        std::string::npos);
}
