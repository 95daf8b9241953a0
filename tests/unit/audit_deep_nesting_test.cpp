// Deeply nested expressions (issue 48): a 40,000-link attribute chain overflowed the
// stack in NodeReader::dotted, and 10,000 nested calls took 47 s (every argument list
// asked tree-sitter for its parent, which walks down from the root). The walks are
// loops now and each node costs the same however deep it lies.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "audit_support.hpp"
#include "sitepatch/audit/facts.hpp"
#include "sitepatch/audit/prefilter.hpp"
#include "sitepatch/audit/scan.hpp"

using namespace sitepatch::audit;

namespace {

std::string repeated(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * size_t(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// `body` inside g(), then a flagged call, so the scan reads the block.
std::string deep_module(const std::string& body) {
  return "import os\ndef g(p):\n" + body + "\n    os.system('x')\n";
}

// The refs of g() named `name`.
int refs_called(const ModuleFacts& m, const std::string& name) {
  int count = 0;
  for (const Function& f : m.functions)
    for (const Ref& r : f.refs) count += r.name == name;
  return count;
}

double deep_seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

RuleSet deep_rules() {
  RuleSet r;
  r.add(builtin_rules());
  return r;
}

}  // namespace

TEST_CASE("a 40000-link attribute chain is read as one dotted name without recursion", "[audit]") {
  const std::string chain = "a" + repeated(".b", 40'000);
  const std::string src = deep_module("    x = " + chain + "\n    " + chain + "()");
  ModuleFacts m = extract(src, "pkg.m", false, true);
  CHECK(refs_called(m, chain) == 2);  // the value read, and the call
  CHECK(refs_called(m, "os.system") == 1);

  // The scan (audit --path) and the walk's extraction both get through it.
  RuleSet rules = deep_rules();
  Prefilter filter(rules);
  TextScan s = scan_text(src, "pkg.m", false, rules, filter, nullptr);
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].operation == "os.system");
}

TEST_CASE("10000 nested calls are read in time linear in their depth", "[audit]") {
  // Each argument list asked ts_node_parent for its call: 40 s here for 10,000 levels.
  const std::string src = deep_module("    x = " + repeated("f(", 10'000) + "p" + repeated(")", 10'000));
  auto start = std::chrono::steady_clock::now();
  ModuleFacts m = extract(src, "pkg.m", false, true);
  double took = deep_seconds_since(start);
  CHECK(refs_called(m, "f") == 10'000);
  // Milliseconds when linear; the bound leaves a loaded machine a hundred times that.
  CHECK(took < 3.0);

  // Calls of calls (`f()()()...`): the callee's text was copied whole at each level.
  const std::string called = deep_module("    x = f" + repeated("()", 20'000));
  start = std::chrono::steady_clock::now();
  m = extract(called, "pkg.m", false, true);
  took = deep_seconds_since(start);
  CHECK(refs_called(m, "f") == 1);
  CHECK(took < 3.0);
}

TEST_CASE("conditions and sums and targets nested 100000 deep are read without deep recursion", "[audit]") {
  const int n = 100'000;
  // `if not not ... TYPE_CHECKING:` (an even count: TYPE_CHECKING itself), a sum whose
  // first term is a string, a target in 100,000 parentheses.
  const std::string src = deep_module("    if " + repeated("not ", n) + "TYPE_CHECKING:\n        import json\n" +
                                      "    s = 'a'" + repeated(" + p", n) + "\n    " +
                                      repeated("(", n) + "t" + repeated(")", n) + " = 1");
  ModuleFacts m = extract(src, "pkg.m", false, true);
  CHECK(refs_called(m, "os.system") == 1);
  const Function& g = m.functions[1];
  REQUIRE(g.types.count("s"));
  CHECK(g.types.at("s").find("call:str") != std::string::npos);  // a sum starting with a string
  CHECK(g.is_local("t"));
  CHECK(g.is_local("s"));
}

TEST_CASE("a call chain of 200000 functions is walked and its cycles found without recursion", "[audit]") {
  // f0 calls f1 ... calls f200000, which calls f0: one cycle of them all. Finding the
  // cycles recursed once a call: a chain this long overflowed the stack.
  const int n = 200'000;
  auditsupport::MemorySource src;
  std::string text = "import os\n";
  for (int i = 0; i < n; ++i) text += "def f" + std::to_string(i) + "():\n    f" + std::to_string(i + 1) + "()\n";
  text += "def f" + std::to_string(n) + "():\n    os.system('x')\n    f0()\n";
  src.files["pkg/api.py"] = text;
  CallGraph g = walk(src, auditsupport::dynamo(), {"pkg.api", "f0", 0});
  CHECK(g.functions == size_t(n) + 1);
  REQUIRE(g.cycles.size() == 1);
  CHECK(g.cycles[0].size() == size_t(n) + 1);
  CHECK(g.chains.size() == 1);
}
