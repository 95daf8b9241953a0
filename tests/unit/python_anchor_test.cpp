// insert-before, and insert-after with `anchor:`: new statements beside one statement of
// a function's body, the anchor found by statement (once, at any depth), applying twice
// changes nothing.
#include <catch2/catch.hpp>

#include "unit/python_support.hpp"

using namespace pytest;

namespace {

const std::string kSrc =
    "class Adapter:\n"
    "    def send(self, request, timeout=None):\n"
    "        if isinstance(timeout, tuple):\n"
    "            connect, read = timeout\n"
    "            timeout = Sauce(connect=connect, read=read)\n"
    "        else:\n"
    "            timeout = Sauce(connect=timeout, read=timeout)\n"
    "        resp = self.conn.urlopen(\n"
    "            request, timeout=timeout\n"
    "        )  # the pool's\n"
    "        return resp\n"
    "\n"
    "    def close(self):\n"
    "        pass\n";

Edit anchored(Action a, std::string anchor, std::string code, std::string target = "Adapter.send") {
  Edit e = edit(a, std::move(target), std::move(code));
  e.anchor = std::move(anchor);
  return e;
}

std::string replaced_in(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("insert-before puts the code above the anchor, at its indentation, inside an else", "[python][anchor]") {
  std::vector<Edit> edits{anchored(Action::insert_before, "timeout = Sauce(connect=timeout, read=timeout)",
                                   "timeout_set = True\nlog(timeout)\n")};
  Run r = run(kSrc, edits);
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.results[0].line == 7);
  CHECK(r.out == replaced_in(kSrc, "            timeout = Sauce(connect=timeout, read=timeout)\n",
                      "            timeout_set = True\n            log(timeout)\n"
                      "            timeout = Sauce(connect=timeout, read=timeout)\n"));
  // Applied already: the code is right above the anchor.
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("insert-after with anchor puts the code below the statement, a multi-line one matched by trimmed lines",
          "[python][anchor]") {
  // Written at column 0 and with other indentation than the file's: the lines trimmed match.
  std::vector<Edit> edits{anchored(Action::insert_after, "resp = self.conn.urlopen(\n  request, timeout=timeout\n)",
                                   "if resp is None:\n    raise ValueError(request)\n")};
  Run r = run(kSrc, edits);
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == replaced_in(kSrc, "        )  # the pool's\n",
                      "        )  # the pool's\n        if resp is None:\n            raise ValueError(request)\n"));
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("an anchor that is a compound statement is found by its header too", "[python][anchor]") {
  std::vector<Edit> before{anchored(Action::insert_before, "if isinstance(timeout, tuple):", "timeout = timeout or 1\n")};
  Run r = run(kSrc, before);
  REQUIRE(r.results[0].outcome == Outcome::will_apply);
  CHECK(r.out == replaced_in(kSrc, "        if isinstance(timeout, tuple):\n",
                      "        timeout = timeout or 1\n        if isinstance(timeout, tuple):\n"));
  CHECK(idempotent(r.out, before));
  // After a compound statement: after its whole block, else clause included.
  std::vector<Edit> after{anchored(Action::insert_after, "if isinstance(timeout, tuple):", "pass\n")};
  Run a = run(kSrc, after);
  CHECK(a.out == replaced_in(kSrc, "        resp = self", "        pass\n        resp = self"));
}

TEST_CASE("an anchor found twice or not at all fails, naming the target and the lines", "[python][anchor]") {
  std::string src = kSrc + "\n    def again(self):\n        x = 1\n        if x:\n            x = 1\n        return x\n";
  Run twice = run(src, {anchored(Action::insert_before, "x = 1", "y = 2\n", "Adapter.again")});
  REQUIRE(twice.results[0].outcome == Outcome::failed);
  CHECK(twice.results[0].failure == Failure::ambiguous);
  CHECK(twice.results[0].message == "anchor `x = 1` matched 2 statements of Adapter.again (lines 17, 19), expected 1");
  CHECK(twice.results[0].lines == std::vector<int>{17, 19});
  CHECK(twice.out == src);

  // Only whole statements count: `x = 1` is not in `xx = 1`, in a comment or in a string.
  Run none = run(kSrc, {anchored(Action::insert_after, "connect = 1", "y = 2\n")});
  REQUIRE(none.results[0].outcome == Outcome::failed);
  CHECK(none.results[0].failure == Failure::mismatch);
  CHECK(none.results[0].message == "anchor `connect = 1` matched no statement of Adapter.send (lines 2-11), expected 1");
  CHECK(none.results[0].line == 2);

  // Another function's statement is not this one's.
  Run other = run(kSrc, {anchored(Action::insert_before, "pass", "y = 2\n")});
  CHECK(other.results[0].outcome == Outcome::failed);
  Run close = run(kSrc, {anchored(Action::insert_before, "pass", "y = 2\n", "Adapter.close")});
  CHECK(close.results[0].outcome == Outcome::will_apply);
}

TEST_CASE("anchored inserts refuse what they cannot place", "[python][anchor]") {
  // A class's statements are no function's (parse refuses the recipe before this).
  Edit c = anchored(Action::insert_before, "pass", "y = 2\n", "Adapter");
  c.kind = TargetKind::class_;
  Run cls = run(kSrc, {c});
  REQUIRE(cls.results[0].outcome == Outcome::failed);
  CHECK(cls.results[0].message == "Adapter is a class: `anchor` is a statement of a function's body");

  std::string shared = "def f(a):\n    a = 1; b = 2\n    return a\n";
  Run semi = run(shared, {anchored(Action::insert_after, "a = 1", "c = 3\n", "f")});
  REQUIRE(semi.results[0].outcome == Outcome::failed);
  CHECK(semi.results[0].message ==
        "anchor `a = 1` shares line 2 of f with another statement: new lines cannot go after it alone");
  Run empty = run(shared, {anchored(Action::insert_before, "return a", "  \n", "f")});
  CHECK(empty.results[0].message == "insert-before needs `code`");
}

TEST_CASE("new code that repeats its anchor is still found applied", "[python][anchor]") {
  std::string src = "def f(q):\n    q.flush()\n    return q\n";
  std::vector<Edit> edits{anchored(Action::insert_before, "q.flush()", "q.flush()\n", "f")};
  Run r = run(src, edits);
  CHECK(r.out == "def f(q):\n    q.flush()\n    q.flush()\n    return q\n");
  CHECK(idempotent(r.out, edits));
}

TEST_CASE("insert-after without anchor keeps its meaning, and anchors work in tabs and CRLF files", "[python][anchor]") {
  std::string src = "def f(q):\r\n\tif q:\r\n\t\tq.flush()\r\n\treturn q\r\n";
  std::vector<Edit> edits{anchored(Action::insert_before, "q.flush()", "if q.closed:\n    return q\n", "f")};
  Run r = run(src, edits);
  CHECK(r.out == "def f(q):\r\n\tif q:\r\n\t\tif q.closed:\r\n\t\t\treturn q\r\n\t\tq.flush()\r\n\treturn q\r\n");
  CHECK(idempotent(r.out, edits));
  Run plain = run(src, {edit(Action::insert_after, "f", "def g():\n    pass\n")});
  CHECK(plain.out == src + "\r\n\r\ndef g():\r\n\tpass\r\n");
}
