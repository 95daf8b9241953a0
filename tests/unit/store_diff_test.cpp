// unified_diff: exact git-style text, and real `git apply` / `patch -p1` accept it.
#include <catch2/catch.hpp>

#include "sitepatch/store/history.hpp"
#include "sitepatch/util/process.hpp"
#include "unit/store_support.hpp"

using sitepatch::store::unified_diff;
using store_test::read_file;
using store_test::TempDir;
using store_test::write_file;

namespace {

// Applies `diff` inside `dir` with argv, the diff on stdin; returns the exit status.
int apply(const std::vector<std::string>& argv, const std::string& diff) {
  auto r = sitepatch::util::run(argv, diff);
  if (r.status != 0) UNSCOPED_INFO(r.out << r.err);
  return r.status;
}

// Writes old_text at dir/rel, applies the diff forward (new_text), then backward (old_text),
// with git apply, and forward again with patch -p1.
void round_trip(const std::string& old_text, const std::string& new_text) {
  TempDir tmp;
  const std::string rel = "pkg/sub/mod.py";
  const std::string file = tmp / rel;
  write_file(file, old_text);
  const std::string diff = unified_diff(old_text, new_text, rel);
  REQUIRE_FALSE(diff.empty());
  INFO(diff);
  REQUIRE(apply({"git", "-C", tmp.path, "apply", "--check", "-"}, diff) == 0);
  REQUIRE(apply({"git", "-C", tmp.path, "apply", "-"}, diff) == 0);
  CHECK(read_file(file) == new_text);
  REQUIRE(apply({"git", "-C", tmp.path, "apply", "-R", "-"}, diff) == 0);
  CHECK(read_file(file) == old_text);
  REQUIRE(apply({"patch", "-p1", "-s", "-d", tmp.path}, diff) == 0);
  CHECK(read_file(file) == new_text);
  REQUIRE(apply({"patch", "-p1", "-R", "-s", "-d", tmp.path}, diff) == 0);
  CHECK(read_file(file) == old_text);
}

std::string numbered(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

}  // namespace

TEST_CASE("unified_diff of equal texts is empty", "[store]") {
  CHECK(unified_diff("same\n", "same\n", "a.py").empty());
  CHECK(unified_diff("", "", "a.py").empty());
}

TEST_CASE("unified_diff gives git headers and three lines of context", "[store]") {
  const std::string old_text = numbered(1, 9);
  std::string new_text = old_text;
  new_text.replace(new_text.find("line 5\n"), 7, "line five\n");
  // The index line carries the blob ids git hash-object gives the two texts.
  CHECK(unified_diff(old_text, new_text, "pkg/m.py") ==
        "diff --git a/pkg/m.py b/pkg/m.py\n"
        "index 5578ccb..8d85ab6 100644\n"
        "--- a/pkg/m.py\n"
        "+++ b/pkg/m.py\n"
        "@@ -2,7 +2,7 @@ line 1\n"
        " line 2\n"
        " line 3\n"
        " line 4\n"
        "-line 5\n"
        "+line five\n"
        " line 6\n"
        " line 7\n"
        " line 8\n");
}

TEST_CASE("unified_diff marks a missing final newline", "[store]") {
  std::string d = unified_diff("a\nb", "a\nc", "m.py");
  CHECK(d.find("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n") !=
        std::string::npos);
}

TEST_CASE("git apply and patch -p1 take the diff both ways", "[store]") {
  SECTION("an edit in the middle of a longer file") {
    std::string old_text = numbered(1, 40);
    std::string new_text = old_text;
    new_text.replace(new_text.find("line 10\n"), 8, "line ten\nline ten and a half\n");
    new_text.replace(new_text.find("line 30\n"), 8, "");
    round_trip(old_text, new_text);
  }
  SECTION("adding and removing the final newline") {
    round_trip("def f():\n    return 1\n", "def f():\n    return 2");
    round_trip("def f():\n    return 1", "def f():\n    return 2\n");
    round_trip("x = 1", "x = 2");
  }
  SECTION("CRLF line endings survive") {
    round_trip("def f():\r\n    return 1\r\n\r\nprint(f())\r\n",
               "def f():\r\n    return 2\r\n\r\nprint(f())\r\n");
  }
  SECTION("an empty file gaining lines and losing them") {
    round_trip("", "import os\n");
    round_trip("import os\n", "");
  }
}

TEST_CASE("unified_diff says binary content differs instead of diffing it", "[store]") {
  std::string d = unified_diff(std::string("a\0b", 3), "ab", "pkg/x.so");
  CHECK(d.find("diff --git a/pkg/x.so b/pkg/x.so\n") == 0);
  CHECK(d.find("Binary files a/pkg/x.so and b/pkg/x.so differ\n") != std::string::npos);
}
