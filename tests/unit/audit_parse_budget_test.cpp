// A scan parses a file's blocks, round after round, and the whole file when a block is
// damaged (issue 48): every one of those parses once had the bound of a parse of its
// own, so a 0.84 MB file with a 6.7 s bound held a scan 36-39 s. Now the file's parses
// share that one bound, and a damaged block stops the blocks at once.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "audit/blocks.hpp"
#include "python/tree.hpp"
#include "sitepatch/audit/prefilter.hpp"
#include "sitepatch/audit/scan.hpp"

using namespace sitepatch::audit;
namespace ts = sitepatch::python::ts;

namespace {

// Sets bounds() for one test and puts them back.
struct FileBoundsScope {
  ts::Bounds saved = ts::bounds();
  explicit FileBoundsScope(ts::Bounds b) { ts::bounds() = b; }
  ~FileBoundsScope() { ts::bounds() = saved; }
};

// `blocks` functions of `lines` statements each, every one with a flagged call (so a
// scan parses them all), each well within a bound a whole parse of them exceeds.
std::string blocks_text(int blocks, int lines) {
  std::string out = "import os\n";
  for (int b = 0; b < blocks; ++b) {
    out += "def f" + std::to_string(b) + "(x):\n    os.system('x')\n";
    for (int i = 0; i < lines; ++i) out += "    x = (x, [" + std::to_string(i) + ", x.y], {'k': x})\n";
  }
  return out;
}

RuleSet budget_rules() {
  RuleSet r;
  r.add(builtin_rules());
  return r;
}

}  // namespace

TEST_CASE("a scan's parses of one file share the file's one parse bound", "[audit]") {
  const std::string src = blocks_text(400, 40);  // 400 blocks, 524 KB
  RuleSet rules = budget_rules();
  Prefilter filter(rules);
  // 20 ms for the file: far less than parsing all of it takes, far more than one block.
  FileBoundsScope b({std::size_t(64) << 20, 20'000, 0});
  auto start = std::chrono::steady_clock::now();
  try {
    scan_text(src, "pkg/many.py", false, rules, filter, nullptr);
    FAIL("parsed 400 blocks within the bound of the whole file");
  } catch (const ts::ParseLimit& e) {
    std::string message = e.what();
    INFO(message);
    // The bound the file had, and the file's own size, not a block's.
    CHECK(message.rfind("pkg/many.py: parsing stopped after 0.02 s, the bound for 524 KB of Python; ", 0) == 0);
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(took < 1.0);  // about the bound, not a parse of every block

  // The bound was the file's: the next file has its own again.
  const std::string small = blocks_text(2, 5);
  TextScan s = scan_text(small, "pkg/small.py", false, rules, filter, nullptr);
  CHECK(s.findings.size() == 2);
}

TEST_CASE("a damaged block stops the blocks: the whole file is parsed next", "[audit]") {
  // A small damaged block first, then one that takes long to parse.
  const std::string damaged = "import os\ndef f:\n    os.system('x')\n";
  const std::string src = damaged + blocks_text(1, 20'000);
  auto blocks = detail::top_level_blocks(src);
  REQUIRE(blocks.size() == 4);
  std::vector<detail::Block> chosen{blocks[1], blocks[3]};
  ts::FileBudget budget(src.size());
  bool broken = false;
  detail::extract_blocks(src, "pkg.mod", false, chosen, nullptr, broken, true);
  CHECK(broken);
  // Only the damaged block was parsed: microseconds, where the 0.9 MB one takes a
  // quarter of a second or more.
  CHECK(budget.spent_micros < 100'000);

  // The scan then reads the whole file, and finds the call the damaged block makes.
  RuleSet rules = budget_rules();
  Prefilter filter(rules);
  TextScan s = scan_text(src, "pkg.mod", false, rules, filter, nullptr);
  CHECK(s.syntax_errors);
  CHECK(s.bytes_parsed == src.size());
}
