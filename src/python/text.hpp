#pragma once
// Line and indentation utilities over source text: no Python knowledge beyond
// "indentation is leading whitespace".
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::python::text {

/// How a file indents: its unit ("    ", "  ", "\t") and its line ending.
struct Style {
  std::string unit = "    ";
  std::string eol = "\n";
  bool tabs() const { return !unit.empty() && unit[0] == '\t'; }
};

/// A byte range [begin, end) of a text.
struct Range {
  size_t begin = 0, end = 0;
};

/// "\r\n" when the first line ends so, else "\n".
std::string detect_eol(std::string_view src);

/// `s` with every "\r\n" turned into "\n".
std::string to_lf(std::string_view s);

/// `s` (LF line endings) with every "\n" turned into `eol`.
std::string with_eol(std::string_view s, std::string_view eol);

/// Offset of the first byte of the line holding `off`.
size_t line_begin(std::string_view src, size_t off);

/// Offset just past the line ending of the line holding `off` (or the end of `src`).
size_t line_after(std::string_view src, size_t off);

/// The spaces and tabs at the start of the line that begins at `begin`.
std::string_view leading_ws(std::string_view src, size_t begin);

/// `code` (written at column 0, any line endings, maybe a trailing newline) re-indented:
/// every line gets `prefix`, the code's own indent unit becomes `style.unit` per level,
/// lines end with `style.eol` (the last one too). Leading/trailing blank lines dropped.
/// `literal` lists ranges of `to_lf(code)` that are string literals (sorted, not
/// overlapping): a line that begins
/// inside one is copied byte for byte (no prefix, no unit change, nothing stripped) and
/// counts for neither the common indentation nor the unit; a line that ends inside one
/// keeps its trailing whitespace.
std::string reindent(std::string_view code, std::string_view prefix, const Style& style,
                     const std::vector<Range>& literal = {});

/// Text normalized for comparison: LF, trailing whitespace and blank edge lines
/// dropped, `indent` removed from the start of each line that has it.
std::string normalize_block(std::string_view s, std::string_view indent);

/// `s` without spaces, tabs and line endings at both ends.
std::string_view strip(std::string_view s);

/// "1 time" / "3 times".
std::string times(size_t n);

}  // namespace sitepatch::python::text
