// Which edit broke a result: each edit's bytes in the new text, carried through later
// recipes' changes, and the excerpt users read.
#include <catch2/catch.hpp>

#include "engine/edits/result_check.hpp"

using namespace sitepatch::engine::detail;
using sitepatch::python::TextChange;

TEST_CASE("spans follow the changes made after them", "[engine]") {
  // First recipe: its edit 0 wrote bytes [10, 20).
  std::vector<EditSpan> spans;
  carry_spans(spans, {{10, 12, 10, 20, 0}}, {7});
  REQUIRE(spans.size() == 1);
  CHECK((spans[0].edit == 7 && spans[0].begin == 10 && spans[0].end == 20));
  // Second recipe: 5 bytes inserted before it, 3 bytes replaced by 1 inside it,
  // and its own edit 1 appends at 30.
  carry_spans(spans, {{2, 2, 2, 7, 0}, {14, 17, 19, 20, 0}, {30, 30, 33, 36, 1}}, {8, 9});
  REQUIRE(spans.size() == 4);
  CHECK((spans[0].begin == 15 && spans[0].end == 23));
  CHECK((spans[1].edit == 8 && spans[1].begin == 2 && spans[1].end == 7));
  CHECK((spans[3].edit == 9 && spans[3].begin == 33 && spans[3].end == 36));
}

TEST_CASE("the culprit holds the error, else precedes it, else comes first", "[engine]") {
  std::string text = "a\nbb\nccc\ndddd\n";
  std::vector<EditSpan> spans{{1, 2, 5}, {2, 9, 14}};
  CHECK(culprit(spans, text, {2, 2}).edit == 1);  // "bb", column 2
  CHECK(culprit(spans, text, {3, 2}).edit == 1);  // after the first span, before the second
  CHECK(culprit(spans, text, {4, 1}).edit == 2);
  CHECK(culprit(spans, text, {1, 1}).edit == 1);  // before both
}

TEST_CASE("the excerpt numbers the lines around the error and puts a caret under it", "[engine]") {
  std::string text = "def f():\n\treturn (\n\nx = 1\ny = 2\nz = 3\n";
  CHECK(excerpt(text, {2, 9}, "m.py") ==
        "    m.py, as the edits would make it:\n"
        "      1 | def f():\n"
        "    > 2 | \treturn (\n"
        "        | \t       ^\n"
        "      3 | \n"
        "      4 | x = 1");
  CHECK(line_of(text, 0) == 1);
  CHECK(line_of(text, 9) == 2);
}
