// Issue 27: the scan (`audit --module`) and the walk (`audit MODULE:FUNCTION`) take one
// view of what a call is, receiver types included, so a function's own flagged calls
// are the same in both: the walk's one-step chains from it (`--depth 1`) and the
// scan's findings in it. Asserted on a fixture package through the CLI, and on Debian's
// torch through the engine in one process.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <set>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "sitepatch/audit/flow.hpp"
#include "sitepatch/engine/audit.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"

namespace {

using Calls = std::set<std::pair<int, std::string>>;  // line, operation

// Every function and method of a Python file, qualified ("Cls.method", "outer.inner"),
// as Python's own ast reads it.
std::vector<std::string> functions_of(const std::string& path) {
  const char* code =
      "import ast, sys\n"
      "def visit(node, prefix):\n"
      "    for n in ast.iter_child_nodes(node):\n"
      "        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):\n"
      "            print(prefix + n.name); visit(n, prefix + n.name + '.')\n"
      "        elif isinstance(n, ast.ClassDef):\n"
      "            visit(n, prefix + n.name + '.')\n"
      "visit(ast.parse(open(sys.argv[1]).read()), '')\n";
  auto r = sitepatch::util::run({"python3", "-c", code, path});
  REQUIRE(r.status == 0);
  std::vector<std::string> out;
  for (auto& line : sitepatch::util::split(r.out, '\n'))
    if (!line.empty()) out.push_back(line);
  return out;
}

// The scan's findings in each function of `module`.
std::map<std::string, Calls> scanned(const std::vector<std::string>& env, const std::string& module) {
  auto args = env;
  args.insert(args.end(), {"--json", "audit", "--module", module});
  auto r = testsupport::run_sitepatch(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::map<std::string, Calls> out;
  auto doc = nlohmann::json::parse(r.out);  // a named document: the loop reads into it
  for (auto& f : doc["files"])
    for (auto& x : f["findings"]) {
      if (x["function"].is_null()) continue;
      std::string fn = x["function"];
      out[fn.substr(fn.find(':') + 1)].insert({x["line"].get<int>(), x["operation"].get<std::string>()});
    }
  return out;
}

// The operations the walk flags in the entry itself.
Calls walked(const std::vector<std::string>& env, const std::string& entry) {
  auto args = env;
  args.insert(args.end(), {"--json", "audit", "--depth", "1", entry});
  auto r = testsupport::run_sitepatch(args);
  INFO(entry + ": " + r.err);
  REQUIRE(r.out.size() > 0);
  Calls out;
  auto doc = nlohmann::json::parse(r.out);
  for (auto& c : doc["chains"])
    if (c["steps"].size() == 1) out.insert({c["steps"][0]["line"].get<int>(), c["operation"].get<std::string>()});
  // What the entry's own defaults rule out (`library_paths(cuda=False)`'s cuda arm) the walk
  // read and listed as left out; the scan, which knows no caller, flags it.
  for (auto& r : doc["ruled_out"])
    if (r["function"] == entry && !r["rule"].is_null()) out.insert({r["line"].get<int>(), r["call"].get<std::string>()});
  return out;
}

// Functions of the file at `path` where the scan's findings (`scan`, by function) and
// `walk(function)` disagree, each with what only one of them flags; and how many calls
// they agreed on.
template <class Walk>
std::vector<std::string> disagreements(std::map<std::string, Calls> scan, const std::string& path, Walk walk,
                                       size_t& agreed) {
  std::vector<std::string> out;
  agreed = 0;
  for (const std::string& fn : functions_of(path)) {
    Calls walked_calls = walk(fn);
    const Calls& found = scan[fn];
    if (walked_calls == found) {
      agreed += walked_calls.size();
      continue;
    }
    std::string s = fn + ":";
    for (auto& c : walked_calls)
      if (!found.count(c)) s += " walk only " + c.second + "@" + std::to_string(c.first);
    for (auto& c : found)
      if (!walked_calls.count(c)) s += " scan only " + c.second + "@" + std::to_string(c.first);
    out.push_back(s);
  }
  return out;
}

// The same through the CLI's documents.
std::vector<std::string> disagreements(const std::vector<std::string>& env, const std::string& module,
                                       const std::string& path, size_t& agreed) {
  return disagreements(
      scanned(env, module), path, [&](const std::string& fn) { return walked(env, module + ":" + fn); }, agreed);
}

const char* kTyped = R"(import logging
import pathlib

import torch

log = logging.getLogger(__name__)


class Built:
    @property
    def path(self) -> pathlib.Path:
        return pathlib.Path("/tmp/x")

    def ready(self):
        return self.path.exists()


def report(x: torch.Tensor, p: pathlib.Path):
    log.info("reporting")
    values = x.tolist()
    return p.read_text(), values, x.float().item()


def made():
    q = pathlib.Path.home()
    return q.exists()


def quiet():
    log.warning("no word of a rule in this function")
)";

}  // namespace

TEST_CASE("the scan flags what the walk flags: receiver types, module loggers, annotated parameters",
          "[e2e][audit]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  testsupport::spit(venv.site_packages + "/typed/__init__.py", "");
  testsupport::spit(venv.site_packages + "/typed/calls.py", kTyped);
  std::vector<std::string> env = {"--venv", venv.root};
  auto scan = scanned(env, "typed.calls");
  // The cases a scan missed before it read what values hold.
  CHECK(scan["Built.ready"] == Calls{{15, "pathlib.Path.exists"}});
  CHECK(scan["report"] == Calls{{19, "logging.Logger.info"},
                                {20, "torch.Tensor.tolist"},
                                {21, "pathlib.Path.read_text"},
                                {21, "torch.Tensor.item"}});
  CHECK(scan["made"] == Calls{{25, "pathlib.Path.home"}, {26, "pathlib.Path.exists"}});
  CHECK(scan["quiet"] == Calls{{30, "logging.Logger.warning"}});
  size_t agreed = 0;
  CHECK(disagreements(env, "typed.calls", venv.site_packages + "/typed/calls.py", agreed).empty());
  CHECK(agreed == 8);
}

// Debian's torch through the engine in this process, as the CLI calls it (the test above
// holds the CLI's documents to the same answers): one walk per function of three modules,
// about 120, each module lowered once (keep_lowered, as explain --run does), where a
// process per walk lowered torch's import graph anew each time (54 s of the suite).
TEST_CASE("the scan and the walk flag the same calls in Debian's torch", "[e2e][audit][torch]") {
  const std::string root = "/usr/lib/python3/dist-packages/torch/";
  struct stat st;
  REQUIRE(::stat((root + "hub.py").c_str(), &st) == 0);  // setup.sh installs python3-torch for the tests
  auto host = sitepatch::host::make_local_host();
  auto session = sitepatch::engine::Session::open(*host, "/usr/bin/python3", "");
  sitepatch::audit::RuleSet rules;
  rules.add(sitepatch::audit::builtin_rules());
  sitepatch::audit::flow::keep_lowered(true);
  size_t total = 0;
  for (auto [module, file] : {std::pair{"torch.hub", "hub.py"}, {"torch.utils.cpp_extension", "utils/cpp_extension.py"},
                              {"torch.utils.data.dataloader", "utils/data/dataloader.py"}}) {
    std::map<std::string, Calls> scan;
    auto scanned = sitepatch::engine::audit_scan(*host, &session, rules, sitepatch::engine::ScanScope::module, module, {});
    for (auto& f : scanned.files)
      for (auto& x : f.findings)
        if (!x.function.empty()) scan[x.function].insert({x.line, x.operation});
    size_t agreed = 0;
    auto differ = disagreements(scan, root + file, [&](const std::string& fn) {
      auto cg = sitepatch::engine::audit_calls(session, rules, {module, fn, 1}, false).graph;
      Calls walk;
      for (auto& c : cg.chains)
        if (c.steps.size() == 1) walk.insert({c.steps[0].line, c.operation});
      for (auto& r : cg.ruled_out)
        if (r.function == std::string(module) + ":" + fn && !r.rule.empty()) walk.insert({r.line, r.call});
      return walk;
    }, agreed);
    INFO(module << ": " << sitepatch::util::join(differ, "\n"));
    CHECK(differ.empty());
    CHECK(agreed > 0);
    total += agreed;
  }
  sitepatch::audit::flow::keep_lowered(false);
  CHECK(total > 40);
}
