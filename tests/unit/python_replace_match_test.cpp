// replace's `old` and `new` in the file: matches on token boundaries only (`= 1` is
// not found inside `= 10`), and lines 2+ indented relative to where the match begins.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

namespace {

Edit replace(std::string target, std::string old_text, std::string new_text) {
  Edit e = edit(Action::replace, std::move(target));
  e.old_text = std::move(old_text);
  e.new_text = std::move(new_text);
  return e;
}

}  // namespace

TEST_CASE("replace refuses an `old` found only inside a longer number, naming the line and the token", "[python]") {
  // Issue 49: `DEFAULT_POOLSIZE = 1` -> `= 6` planned `DEFAULT_POOLSIZE = 60`.
  std::string src = "import os\n\nDEFAULT_POOLSIZE = 10\nDEFAULT_RETRIES = 0\n";
  Edit e = replace("", "DEFAULT_POOLSIZE = 1", "DEFAULT_POOLSIZE = 6");
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::failed);
  CHECK(r.results[0].failure == Failure::mismatch);
  CHECK(r.results[0].message ==
        "`DEFAULT_POOLSIZE = 1` is found in the module only inside `DEFAULT_POOLSIZE = 10` (line 3), which it "
        "would cut: `old` must begin and end where a name, number or operator does");
  CHECK(r.out == src);
  // Where the clean occurrence is there too, it is the one replaced.
  src = "DEFAULT_POOLSIZE = 10\nDEFAULT_POOLSIZE = 1\n";
  r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[0].line == 2);
  CHECK(r.out == "DEFAULT_POOLSIZE = 10\nDEFAULT_POOLSIZE = 6\n");
  CHECK(idempotent(r.out, {e}));
}

TEST_CASE("replace does not end inside a float, nor begin inside a name", "[python]") {
  std::string src = "def f():\n    x = 1.5\n    y = 2\n    x = 1\n    return x + y\n";
  Edit e = replace("f", "x = 1", "x = 3");
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == "def f():\n    x = 1.5\n    y = 2\n    x = 3\n    return x + y\n");
  CHECK(idempotent(r.out, {e}));

  src = "def g():\n    foo_bar(1)\n    bar(2)\n";
  Edit call = replace("g", "bar(", "baz(");
  r = run(src, {call});
  CHECK(r.out == "def g():\n    foo_bar(1)\n    baz(2)\n");
  // Only inside names: refused, the name it would cut shown whole, with the other place counted.
  Run cut = run("def g():\n    foo_bar(1)\n    a_bar(2)\n", {call});
  CHECK(cut.results[0].message ==
        "`bar(` is found in g only inside `foo_bar(` (line 2) and 1 more, which it would cut: `old` must begin and "
        "end where a name, number or operator does");
  // Operators are tokens too: `=` is not found inside `==`.
  Run op = run("def k(x):\n    return x == 1\n", {replace("k", "x =", "x :=")});
  CHECK(op.results[0].message.find("only inside `x ==` (line 2)") != std::string::npos);
}

TEST_CASE("replace inside a string literal matches whole words of it", "[python]") {
  // The text of a string is matched as words: `x = 1` inside "x = 10" would cut `10`;
  // the statement below is the one found.
  std::string src = "def f():\n    s = 'x = 10'\n    x = 1\n    return s, x\n";
  Edit e = replace("f", "x = 1", "x = 2");
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == "def f():\n    s = 'x = 10'\n    x = 2\n    return s, x\n");
  // Words inside a string are found where they stand whole.
  src = "def check(n):\n    if n < 0:\n        raise ValueError('n must be positive')\n";
  Edit msg = replace("check", "must be positive", "must be >= 0");
  r = run(src, {msg});
  CHECK(r.out == "def check(n):\n    if n < 0:\n        raise ValueError('n must be >= 0')\n");
  Run word = run(src, {replace("check", "posit", "negat")});
  CHECK(word.results[0].message.find("only inside `positive` (line 3)") != std::string::npos);
}

TEST_CASE("replace places a multi-line `new` written at column 0 at the indentation of the match", "[python]") {
  // The guide's way: a YAML `|` block at column 0, replacing a line in a method body.
  // Its later lines used to land at column 4 (IndentationError at the next line).
  std::string src =
      "class Pool:\n"
      "    def get(self):\n"
      "        conn = self._pool.get()\n"
      "        try:\n"
      "            return conn.open()\n"
      "        finally:\n"
      "            conn.close()\n";
  Edit e = replace("Pool.get", "conn = self._pool.get()\n",
                   "try:\n    conn = self._pool.get(timeout=1)\nexcept Empty:\n    conn = self._new()\n");
  Run r = run(src, {e});
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out ==
        "class Pool:\n"
        "    def get(self):\n"
        "        try:\n"
        "            conn = self._pool.get(timeout=1)\n"
        "        except Empty:\n"
        "            conn = self._new()\n"
        "        try:\n"
        "            return conn.open()\n"
        "        finally:\n"
        "            conn.close()\n");
  CHECK(idempotent(r.out, {e}));
  // `old` of several lines is found the same way: written at column 0.
  Edit back = replace("Pool.get", "try:\n    return conn.open()\nfinally:\n    conn.close()\n",
                      "with conn:\n    return conn.open()\n");
  Run b = run(src, {back});
  CHECK(b.out.substr(b.out.find("        conn = self")) ==
        "        conn = self._pool.get()\n        with conn:\n            return conn.open()\n");
  CHECK(idempotent(b.out, {back}));
}

TEST_CASE("replace keeps the lines of a literal and blank lines as written, and a first line's own indentation",
          "[python]") {
  std::string src = "def f(x):\n    if x:\n        return 1\n    return 2\n";
  // A later line less indented than the first: the block's first line carries the difference.
  Edit e = replace("f", "    return 1\nreturn 2\n", "    return 10\n\nreturn 20\n");
  Run r = run(src, {e});
  CHECK(r.out == "def f(x):\n    if x:\n        return 10\n\n    return 20\n");
  CHECK(idempotent(r.out, {e}));
  // A line that begins inside a string literal is its content: never indented.
  Edit doc = replace("f", "return 2\n", "s = '''a\nb'''\nreturn s\n");
  r = run(src, {doc});
  CHECK(r.out == "def f(x):\n    if x:\n        return 1\n    s = '''a\nb'''\n    return s\n");
  CHECK(idempotent(r.out, {doc}));
}

TEST_CASE("replace reads an `old` written with absolute later lines as before, when only that reading finds it",
          "[python]") {
  // What capture wrote before history record format 3: lines 2+ at their column.
  std::string src = "class A:\n    def f(self, x):\n        if x:\n            return 1\n        return 2\n";
  Edit e = replace("A.f", "if x:\n            return 1", "if x > 0:\n            return 1");
  Run r = run(src, {e});
  CHECK(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == "class A:\n    def f(self, x):\n        if x > 0:\n            return 1\n        return 2\n");
  CHECK(idempotent(r.out, {e}));
  // A recipe a history keeps from before format 3 reads its `new` so too, also where its
  // `old` is one line (nothing to tell the readings apart by).
  Edit one = replace("A.f", "return 2", "x = 2\n        return x");
  one.indent = sitepatch::recipe::ReplaceIndent::absolute;
  r = run(src, {one});
  CHECK(r.out == "class A:\n    def f(self, x):\n        if x:\n            return 1\n        x = 2\n        return x\n");
  CHECK(idempotent(r.out, {one}));
  // Read as relative, the same `new` is indented twice.
  one.indent = sitepatch::recipe::ReplaceIndent::relative;
  CHECK(run(src, {one}).out.find("\n                return x\n") != std::string::npos);
}
