// A scan parses only the top-level blocks that can hold a flagged name: the cut into
// blocks, and that the findings are those of parsing the whole file.
#include <catch2/catch.hpp>

#include <string>

#include "audit/blocks.hpp"
#include "sitepatch/audit/prefilter.hpp"
#include "sitepatch/audit/scan.hpp"

using namespace sitepatch::audit;

namespace {

std::vector<std::string> cut(std::string_view text) {
  std::vector<std::string> out;
  for (auto& b : detail::top_level_blocks(text)) out.emplace_back(text.substr(b.begin, b.end - b.begin));
  return out;
}

RuleSet shipped() {
  RuleSet r;
  r.add(builtin_rules());
  return r;
}

std::string found(const std::vector<Finding>& fs) {
  std::string out;
  for (auto& f : fs) out += f.function + "@" + std::to_string(f.line) + ":" + std::to_string(f.column) + " " + f.operation + "\n";
  return out;
}

}  // namespace

TEST_CASE("top-level blocks: a statement at column 0 outside brackets, strings and continued lines", "[audit]") {
  CHECK(cut("import os\nx = (1,\n2)\n") == std::vector<std::string>{"import os\n", "x = (1,\n2)\n"});
  // Arms of a compound statement and decorators stay with it; comments and indented
  // lines belong to the block above.
  CHECK(cut("try:\n  import a\nexcept ImportError:\n  a = None\nelse:\n  pass\nfinally:\n  pass\n").size() == 1);
  CHECK(cut("if a:\n  pass\nelif b:\n  pass\n").size() == 1);
  CHECK(cut("@dec\n# note\n@other(1)\ndef f():\n  pass\n# end\n") ==
        std::vector<std::string>{"@dec\n# note\n@other(1)\ndef f():\n  pass\n# end\n"});
  // Nothing at column 0 inside a string (one with an escaped quote or newline too),
  // after a backslash, or in a bracket opened on an earlier line.
  CHECK(cut("s = '''\nimport x\n'''\nt = \"a\\\"\\\nimport y\"\nu = 1 + \\\n2\nv = [\n1]\n") ==
        std::vector<std::string>{"s = '''\nimport x\n'''\n", "t = \"a\\\"\\\nimport y\"\n", "u = 1 + \\\n2\n",
                                 "v = [\n1]\n"});
  // Points as tree-sitter counts them.
  auto b = detail::top_level_blocks("a = 1\n\nb = '''x\ny'''\n");
  REQUIRE(b.size() == 2);
  CHECK(b[1].row == 2);
  CHECK(b[1].end_row == 4);
  CHECK(b[1].end_column == 0);
  CHECK(detail::top_level_blocks("").size() == 1);
}

TEST_CASE("a scan of chosen blocks finds what a scan of the whole file finds", "[audit]") {
  RuleSet rules = shipped();
  Prefilter filter(rules);
  auto both = [&](const std::string& text) {
    TextScan part = scan_text(text, "pkg.mod", false, rules, filter, nullptr);
    std::string whole = found(scan(extract(text, "pkg.mod", false, false), rules));
    CHECK(part.parsed);
    CHECK(found(part.findings) == whole);
    return part;
  };
  // A head bound by an import in another block (`sp`, `run`), an alias, both arms of a
  // try/except import, a module-level call, a nested function, a method.
  auto r = both(
      "import subprocess as sp\n"
      "from os.path import exists as ex\n"
      "try:\n    from subprocess import run\nexcept ImportError:\n    run = None\n"
      "launch = sp.Popen\n"
      "def unrelated():\n    return 1 + 2\n"
      "def a():\n    sp.call(['x'])\n"
      "def b():\n    return ex('p')\n"
      "def c():\n    def inner():\n        run(['y'])\n    return inner\n"
      "class K:\n    def m(self):\n        launch(['z'])\n"
      "def d():\n    with open('f') as fh:\n        return fh\n"
      "ex('top')\n");
  CHECK(r.findings.size() == 6);
  CHECK(r.bytes_parsed < 420);  // unrelated() is left out
  // A name bound again further down keeps its first binding, as in the whole file.
  both("from subprocess import run\ndef f():\n    run()\nrun = 5\n");
  both("import os\nos = None\ndef f():\n    os.system('x')\n");
  // A local def shadowing a builtin, in another block than the call.
  both("def open(p):\n    return p\ndef f():\n    return open('x')\n");
  // A file with a syntax error in a block it reads is parsed whole, as before.
  std::string broken = "import subprocess\ndef f():\n    subprocess.run(]\n    x = = 1\ndef g():\n    subprocess.call()\n";
  REQUIRE(extract(broken, "pkg.mod", false, false).syntax_errors > 0);
  r = both(broken);
  CHECK(r.syntax_errors);
  CHECK(r.bytes_parsed == broken.size());
}

TEST_CASE("the parse budget lets one request larger than the cap through alone", "[util]") {
  sitepatch::util::ByteBudget budget(100);
  {
    auto a = budget.take(60);
    auto b = budget.take(40);
    CHECK(budget.peak() == 100);
  }
  auto big = budget.take(500);  // nothing else held: granted
  CHECK(budget.peak() == 500);
}
