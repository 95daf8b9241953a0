#pragma once
// Private to src/python: capture's text helpers: the run of lines two texts differ in,
// a replace's old and new as a person writes them, and whether two texts differ only in
// where their imports are.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sitepatch/python/capture.hpp"

namespace sitepatch::python::detail {

// Two texts as lines (each with its '\n'), and the run of lines where they differ:
// a[pre, a_end) became b[pre, b_end); the lines before and after it are the same.
struct LineRun {
  std::vector<std::string_view> a, b;
  size_t pre = 0, a_end = 0, b_end = 0;
};
LineRun differing_lines(std::string_view a, std::string_view b);

/// The lines of `b` that differ from `a` as one run (old lines, new lines), with a line
/// of context when the old run is empty; nullopt when the texts are equal.
std::optional<std::pair<std::string, std::string>> hunk(std::string_view a, std::string_view b);

/// How many times `needle` occurs in `hay`, not overlapping.
size_t count_of(std::string_view hay, std::string_view needle);

/// A replace's old and new lines without the indentation, blank lines and line end both
/// share, when the old text stays unique in `scope`; else `h` as it is.
std::pair<std::string, std::string> trimmed(const std::pair<std::string, std::string>& h, std::string_view scope);

/// Whether `made` (pip's text with `edits` applied) and `edited` differ only in where
/// the ensure-imports' lines are (and the blank lines after them); where each is, empty
/// when the texts are the same, nullopt when they differ otherwise.
std::optional<std::vector<MovedImport>> moved_imports(const std::string& made, const std::string& edited,
                                                      const std::vector<recipe::Edit>& edits);

}  // namespace sitepatch::python::detail
