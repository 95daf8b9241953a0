// Issue 52 item 4: an audit report people can triage: --min-severity, --category and
// --rule narrow the rules before the walk; --summary counts per rule and per top-level
// package with the worst finding of each; -v ranks the unfollowed calls by what they may
// hide; `rules` fits the terminal.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

const char* kServe = R"(import os
import subprocess

from . import cache


def start(cfg, handlers):
    subprocess.run(["nvidia-smi"])
    print("starting")
    handlers.append(cfg)
    name = cfg.strip()
    os.stat(name)
    cfg.backend.connect()
    return cache.load(name)
)";

const char* kCache = R"(import subprocess


def load(name):
    with open(name) as f:
        text = f.read()
    if not text:
        subprocess.check_output(["make"])
    return text
)";

struct TriageEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  TriageEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
    venv.install(testsupport::build_wheel(
        {"servekit", "1.0", {{"servekit/__init__.py", ""}, {"servekit/api.py", kServe}, {"servekit/cache.py", kCache}}},
        tmp.path + "/w"));
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    return e2e::sp_in(tmp.path, venv.root, std::move(args));
  }
};

}  // namespace

TEST_CASE("audit: --min-severity, --category and --rule narrow what is reported", "[e2e][audit]") {
  TriageEnv env;
  auto all = nlohmann::json::parse(env.sp({"--json", "audit", "servekit.api:start"}).out);
  std::multiset<std::string> rules;
  for (auto& c : all["chains"]) rules.insert(c["rule"]["id"].get<std::string>());
  CHECK(rules == std::multiset<std::string>{"open", "os-stat", "print", "subprocess", "subprocess"});

  auto errors = nlohmann::json::parse(env.sp({"--json", "audit", "servekit.api:start", "--min-severity", "error"}).out);
  REQUIRE(errors["chains"].size() == 2);
  for (auto& c : errors["chains"]) CHECK(c["rule"]["id"] == "subprocess");
  auto files = nlohmann::json::parse(env.sp({"--json", "audit", "servekit.api:start", "--category", "file-io"}).out);
  CHECK(files["chains"].size() == 2);  // open and os.stat
  auto one = nlohmann::json::parse(
      env.sp({"--json", "audit", "servekit.api:start", "--rule", "print", "--rule", "os-stat"}).out);
  CHECK(one["chains"].size() == 2);
  // A scan narrows the same way.
  auto scan = env.sp({"audit", "--package", "servekit", "--min-severity", "warning", "--category", "process"});
  CHECK(scan.out.find("servekit/api.py:8:5: error: servekit.api:start: subprocess.run [process] [subprocess: docs/guide/rules.md#subprocess]\n") != std::string::npos);
  CHECK(scan.out.find("print") == std::string::npos);
  CHECK(scan.out.find("os.stat") == std::string::npos);

  auto typo = env.sp({"audit", "servekit.api:start", "--rule", "subproces"});
  CHECK(typo.status == 2);
  CHECK(typo.err == "sitepatch: error: --rule subproces: no rule has it; did you mean `subprocess`? ('sitepatch rules' "
                    "lists them)\n");
  auto none = env.sp({"audit", "servekit.api:start", "--category", "clock", "--min-severity", "error"});
  CHECK(none.status == 2);
  CHECK(none.err == "sitepatch: error: no rule is left by --min-severity, --category and --rule together\n");
}

TEST_CASE("audit --summary: a count per rule and per top-level package, the worst finding of each", "[e2e][audit]") {
  TriageEnv env;
  auto r = env.sp({"audit", "servekit.api:start", "--summary"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("by rule:\n"
                   "  subprocess      2  error    worst: servekit.api:start -> subprocess.run\n") == 0);
  CHECK(r.out.find("  open            1  warning  worst: servekit.api:start -> servekit.cache:load -> open\n") !=
        std::string::npos);
  CHECK(r.out.find("by top-level package:\n"
                   "  servekit      5  error    worst: servekit.api:start -> subprocess.run\n") != std::string::npos);
  auto j = nlohmann::json::parse(env.sp({"--json", "audit", "--package", "servekit", "--summary"}).out);
  CHECK(j["summary"]["rules"][0] == nlohmann::json({{"rule", "subprocess"}, {"count", 2}, {"severity", "error"},
                                                    {"worst", "servekit/api.py:8 servekit.api:start subprocess.run"}}));
  CHECK(j["summary"]["packages"][0]["count"] == 5);
}

TEST_CASE("audit -v lists the calls that may hide the most first, builtin types' methods counted last",
          "[e2e][audit]") {
  TriageEnv env;
  auto v = env.sp({"-v", "audit", "servekit.api:start"});
  INFO(v.out);
  auto at = v.out.find("calls could not be followed (those that may hide the most first):\n");
  REQUIRE(at != std::string::npos);
  std::string listed = v.out.substr(at);
  CHECK(listed.find("servekit/api.py:13  servekit.api:start  cfg.backend.connect  (") != std::string::npos);
  CHECK(listed.find("    and 2 calls that look like methods of builtin types (a list's, a str's, a dict's): .append, "
                    ".strip\n") != std::string::npos);
  CHECK(listed.find(".append") > listed.find("cfg.backend.connect"));
}

TEST_CASE("rules: on a terminal the table fits its width, the match cut with ...", "[e2e][audit]") {
  auto r = sitepatch::util::run({"script", "-qec", "env COLUMNS=100 " + std::string(SITEPATCH_BIN) + " rules", "/dev/null"});
  REQUIRE(r.status == 0);
  size_t widest = 0;
  for (auto& line : sitepatch::util::split(r.out, '\n')) {
    std::string plain = line;
    for (size_t at; (at = plain.find("\x1b[")) != std::string::npos;) plain.erase(at, plain.find('m', at) - at + 1);
    if (!plain.empty() && plain.back() == '\r') plain.pop_back();
    widest = std::max(widest, plain.size());
  }
  CHECK(widest <= 100);
  CHECK(r.out.find("...") != std::string::npos);
  // Into a pipe every line is whole.
  CHECK(testsupport::run_sitepatch({"rules"}).out.find("pathlib.{Path,PosixPath,WindowsPath}.{exists,is_file,is_dir,is_symlink,is_mount,") !=
        std::string::npos);
}
