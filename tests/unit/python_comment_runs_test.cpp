// Long runs of comment lines inside blocks, and the bounds every parse keeps to. The
// grammar's scanner once rescanned the rest of a run from each of its lines (N^2:
// 100,000 lines took minutes); these tests do not time anything, they rely on the
// parse bound instead: a quadratic parse of these texts would stop with ParseLimit.
#include <catch2/catch.hpp>

#include <string>

#include "python/tree.hpp"
#include "unit/python_support.hpp"

using namespace pytest;
namespace ts = sitepatch::python::ts;

namespace {

constexpr int kLines = 100'000;

// `n` comment lines: as indented as the block, less indented (column 0, as commented-out
// code often is), and blank lines between, in turn.
// `dedented` false: none at column 0 (after a decorator, where one is a syntax error).
std::string comment_run(const std::string& indent, int n, bool dedented = true) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0: out += indent + "# note " + std::to_string(i) + "\n"; break;
      case 1: out += (dedented ? "" : indent) + "#    old_call(" + std::to_string(i) + ")\n"; break;
      case 2: out += "\n"; break;
      default: out += indent + "  # deeper\n"; break;
    }
  }
  return out;
}

int comments_under(TSNode n) {
  int count = ts::is(n, "comment") ? 1 : 0;
  for (TSNode k : ts::named_children(n)) count += comments_under(k);
  return count;
}

// Sets bounds() for one test and puts them back.
struct BoundsScope {
  ts::Bounds saved = ts::bounds();
  explicit BoundsScope(ts::Bounds b) { ts::bounds() = b; }
  ~BoundsScope() { ts::bounds() = saved; }
};

}  // namespace

TEST_CASE("100000 comment lines in a function body: found and edited with every comment kept", "[python]") {
  const std::string run_text = comment_run("    ", kLines);
  const std::string head = "import os\n\ndef f(x):\n    y = x\n";
  const std::string tail = "    return y\n\ndef g():\n    return 1\n";
  const std::string src = head + run_text + tail;

  // Every comment line is a comment node inside f, where it was.
  ts::Tree tree(src);
  CHECK_FALSE(ts_node_has_error(tree.root()));
  auto top = ts::named_children(tree.root());
  REQUIRE(top.size() == 3);
  CHECK(ts::is(top[1], "function_definition"));
  CHECK(comments_under(top[1]) == kLines * 3 / 4);
  CHECK(ts::line(top[2]) == 5 + kLines + 2);

  // An edit on each side of the run, applied and checked by the incremental reparse.
  Edit first = edit(Action::prepend_body, "f", "x = int(x)");
  Edit second = edit(Action::replace_body, "g", "return 2");
  Run r = run(src, {first, second});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[1].outcome == Outcome::will_apply);
  CHECK(r.out == "import os\n\ndef f(x):\n    x = int(x)\n    y = x\n" + run_text +
                     "    return y\n\ndef g():\n    return 2\n");
  CHECK(idempotent(r.out, {first, second}));
}

TEST_CASE("100000 comment lines in a class body between two methods", "[python]") {
  const std::string run_text = comment_run("    ", kLines);
  const std::string src = "class A:\n    def m(self):\n        return 1\n" + run_text +
                          "    def n(self):\n        return 2\n";
  Module m(src, "pkg/a.py");
  CHECK(m.defines("A.m"));
  CHECK(m.defines("A.n"));
  CHECK(m.syntax_problems().empty());

  Edit e = edit(Action::replace_body, "A.n", "return 3");
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == "class A:\n    def m(self):\n        return 1\n" + run_text + "    def n(self):\n        return 3\n");
}

TEST_CASE("comment runs in nested functions and after a decorator and inside brackets keep their places", "[python]") {
  const int n = 20'000;
  const std::string head = "class A:\n    @staticmethod\n" + comment_run("    ", n, false) + "    def f():\n";
  const std::string body = "        def g():\n            return [\n" + comment_run("                ", n) +
                           "                1]\n" + comment_run("            ", n) + "        return g\n" +
                           comment_run("        ", n) + "x = 1\n";
  const std::string src = head + body;
  ts::Tree tree(src);
  CHECK_FALSE(ts_node_has_error(tree.root()));
  CHECK(comments_under(tree.root()) == 4 * (n * 3 / 4));
  auto top = ts::named_children(tree.root());
  REQUIRE(top.size() >= 2);
  CHECK(ts::is(top[0], "class_definition"));
  CHECK(ts::is(top.back(), "expression_statement"));
  CHECK(ts::line(top.back()) == 4 * n + 8);

  Module m(src, "pkg/a.py");
  CHECK(m.defines("A.f"));
  Edit e = edit(Action::prepend_body, "A.f", "x = 0");
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == head + "        x = 0\n" + body);
}

TEST_CASE("a parse over its bounds names the file and leaves the parser usable", "[python]") {
  const std::string src = "def f():\n    return 1\n" + comment_run("    ", 2'000);
  {
    BoundsScope b({1024, 5'000'000, 2'000'000});
    try {
      Module m(src, "pkg/big.py");
      FAIL("parsed a text over the size bound");
    } catch (const ts::ParseLimit& e) {
      CHECK(std::string(e.what()) == "pkg/big.py: 25 KB of Python, more than the 1 KB sitepatch parses");
      CHECK(e.code() == sitepatch::Exit::failed);
    }
  }
  std::string slow;
  for (int i = 0; i < 200'000; ++i) slow += "x" + std::to_string(i) + " = (" + std::to_string(i) + ", [a, b])\n";
  {
    // A text that takes far longer than the bound (1 ms) to parse.
    BoundsScope b({std::size_t(64) << 20, 1'000, 0});
    try {
      Module m(slow, "pkg/slow.py");
      FAIL("parsed past the time bound");
    } catch (const ts::ParseLimit& e) {
      std::string message = e.what();
      INFO(message);
      CHECK(message.rfind("pkg/slow.py: parsing stopped after 0.001 s, the bound for 4.9 MB of Python; ", 0) == 0);
      CHECK(message.find("long runs of comment lines around a syntax error") != std::string::npos);
    }
  }
  // The stopped parse was dropped: the next text parses from its own start.
  Module after(src, "pkg/next.py");
  CHECK(after.defines("f"));
  CHECK(after.syntax_problems().empty());
  Module again(slow.substr(0, slow.find('\n', 1000) + 1), "pkg/slow.py");
  CHECK(again.syntax_problems().empty());
}
