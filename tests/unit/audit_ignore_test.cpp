// Ignore files: which finding an entry accepts, and which entries accepted none of the
// code a run read (unused), as linters report unused suppressions.
#include <catch2/catch.hpp>

#include "sitepatch/audit/ignore.hpp"

using namespace sitepatch::audit;

namespace {

const char* kFile =
    "ignore:\n"
    "  - rule: subprocess\n"
    "    function: pkg.jit:build\n"
    "    reason: used\n"
    "  - rule: open\n"
    "    function: pkg.jit:build\n"
    "    reason: walked, accepts nothing\n"
    "  - rule: open\n"
    "    at: pkg/jit.py:12\n"
    "    reason: a line inside a walked function\n"
    "  - rule: open\n"
    "    at: pkg/jit.py:40\n"
    "    reason: past the walked function's end\n"
    "  - rule: open\n"
    "    function: pkg.other:f\n"
    "    reason: not walked\n";

std::vector<int> lines(const std::vector<const IgnoreEntry*>& entries) {
  std::vector<int> out;
  for (auto* e : entries) out.push_back(e->origin_line);
  return out;
}

}  // namespace

TEST_CASE("an ignore entry is unused when the run read what it names and it accepted nothing", "[audit]") {
  auto entries = parse_ignore(kFile, "ignore.yaml");
  REQUIRE(entries.size() == 5);
  // A walk read pkg.jit:build, lines 10 to 20 of pkg/jit.py.
  Audited walked;
  walked.functions = {"pkg.jit:build"};
  walked.lines["pkg/jit.py"] = {{10, 20}};
  const IgnoreEntry* used = ignored_by(entries, "subprocess", {"pkg.api:entry", "pkg.jit:build"}, "pkg/jit.py", 15);
  REQUIRE(used == &entries[0]);
  CHECK(lines(unused(entries, {used}, walked)) == std::vector<int>{5, 8});
  CHECK(entries[1].describe() == "rule `open` in pkg.jit:build");
  CHECK(entries[2].describe() == "rule `open` at pkg/jit.py:12");

  // A scan read all of pkg/jit.py (module pkg.jit), and accepted nothing.
  Audited scanned;
  scanned.modules = {"pkg.jit"};
  scanned.lines["pkg/jit.py"] = {{1, 1 << 30}};
  CHECK(lines(unused(entries, {}, scanned)) == std::vector<int>{2, 5, 8, 11});
  // Nothing read: nothing judged.
  CHECK(unused(entries, {}, Audited{}).empty());
}
