// A merge by statement (store::merge_units over python::statement_units): changes on
// neighbouring statements both apply, where git_merge_file sees one conflict.
#include <catch2/catch.hpp>

#include "sitepatch/python/units.hpp"
#include "sitepatch/store/history.hpp"

using sitepatch::python::statement_units;
using sitepatch::store::merge_units;

namespace {

std::string joined(const std::vector<std::string>& units) {
  std::string out;
  for (auto& u : units) out += u;
  return out;
}

// Undo `after` -> `before` in `now`, by statement; "" when it conflicts.
std::string undo(const std::string& after, const std::string& now, const std::string& before) {
  auto m = merge_units(statement_units(after), statement_units(now), statement_units(before));
  return m ? joined(*m) : "";
}

const char* kOriginal =
    "def send(self, request, timeout=None):\n"
    "    # Figure out the timeout\n"
    "    timeout = TimeoutSauce(connect=timeout, read=timeout)\n"
    "    conn = self.get_connection(\n"
    "        request.url,\n"
    "        proxies)\n"
    "    return conn\n";

}  // namespace

TEST_CASE("statement_units: a statement's lines stay together, and the units are the text", "[store]") {
  std::string text =
      "import os\n"
      "\n"
      "@decorator(\n"
      "    1)\n"
      "def f(a,\n"
      "      b):\n"
      "    \"\"\"Doc\n"
      "    string.\"\"\"\n"
      "    if a: g(1,\n"
      "           2)\n"
      "    elif b:\n"
      "        pass\n"
      "    # a comment\n"
      "    return x\n";
  auto u = statement_units(text);
  CHECK(joined(u) == text);
  REQUIRE(u.size() == 10);
  CHECK(u[0] == "import os\n");
  CHECK(u[1] == "\n");
  CHECK(u[2] == "@decorator(\n    1)\n");
  CHECK(u[3] == "def f(a,\n      b):\n");
  CHECK(u[4] == "    \"\"\"Doc\n    string.\"\"\"\n");
  CHECK(u[5] == "    if a: g(1,\n           2)\n");
  CHECK(u[6] == "    elif b:\n");
  CHECK(u[7] == "        pass\n");
  CHECK(u[8] == "    # a comment\n");
  CHECK(u[9] == "    return x\n");
  CHECK(statement_units("x = 1") == std::vector<std::string>{"x = 1"});
  CHECK(statement_units("").empty());
}

TEST_CASE("merge by statement: a hotfix on the line next to a patched one is kept when the patch is undone",
          "[store]") {
  std::string before = kOriginal;
  std::string after = before;
  after.replace(after.find("TimeoutSauce(connect=timeout, read=timeout)"),
                std::string("TimeoutSauce(connect=timeout, read=timeout)").size(), "TimeoutSauce(connect=5, read=timeout)");
  // Someone edits the comment right above the patched line.
  std::string now = after;
  now.replace(now.find("# Figure out the timeout"), std::string("# Figure out the timeout").size(), "# hotfix: 5s");
  // git_merge_file sees the two changes as one conflict ...
  CHECK_FALSE(sitepatch::store::merge3(after, now, before, "a.py").clean);
  // ... by statement, each is its own.
  std::string expected = before;
  expected.replace(expected.find("# Figure out the timeout"), std::string("# Figure out the timeout").size(),
                   "# hotfix: 5s");
  CHECK(undo(after, now, before) == expected);
}

TEST_CASE("merge by statement: two changes of one statement conflict, lines of one call included", "[store]") {
  std::string before = kOriginal;
  std::string after = before;
  after.replace(after.find("        request.url,"), std::string("        request.url,").size(), "        request.url_a,");
  std::string now = after;
  now.replace(now.find("        proxies)"), std::string("        proxies)").size(), "        proxies=None)");
  CHECK(undo(after, now, before).empty());  // the same statement, three lines
  // The same statement changed the same way on both sides is no conflict.
  CHECK(undo(after, before, before) == before);
}

TEST_CASE("merge by statement: insertions at one point conflict unless they are the same", "[store]") {
  std::vector<std::string> base = {"a\n", "b\n"};
  CHECK(merge_units(base, {"a\n", "x\n", "b\n"}, {"a\n", "y\n", "b\n"}) == std::nullopt);
  CHECK(merge_units(base, {"a\n", "x\n", "b\n"}, {"a\n", "x\n", "b\n"}) ==
        std::vector<std::string>{"a\n", "x\n", "b\n"});
  // An insertion right before a change that starts at the same point: both, in that order.
  CHECK(merge_units(base, {"a\n", "x\n", "b\n"}, {"a\n", "B\n"}) == std::vector<std::string>{"a\n", "x\n", "B\n"});
  // Touching changes: a's and b's.
  CHECK(merge_units(base, {"A\n", "b\n"}, {"a\n", "B\n"}) == std::vector<std::string>{"A\n", "B\n"});
  // An insertion inside the other's change.
  CHECK(merge_units({"a\n", "b\n", "c\n"}, {"a\n", "x\n", "b\n", "c\n"}, {"Z\n"}) == std::nullopt);
}
