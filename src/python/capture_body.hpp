#pragma once
// Private to src/python: capture's reading of a change inside one function's body: new
// statements only added beside a statement that names them once (an anchored insert),
// or a few changed lines, with the lines around them taken along until the function
// holds them once (a replace).
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "python/tree.hpp"

namespace sitepatch::python::detail {

/// New statements added in one block of a function, and the statement beside them that
/// places them.
struct Insertion {
  size_t begin = 0, end = 0;  // the added lines in the new text, whole lines
  std::string indent;         // their indentation (the block's)
  std::string anchor;         // the neighbouring statement as a recipe gives it
  bool before = false;        // insert-before the statement below, else insert-after the one above
};

/// The insertion that makes function body [nb, ne) of `new_text` (function `nd`) out of
/// [ob, oe) of `old_text` (function `od`): lines only added, whole statements of one
/// block, right beside a statement found once in `od` (the one above preferred, then the
/// one below); nullopt when the change is not that.
std::optional<Insertion> insertion(std::string_view old_text, TSNode od, size_t ob, size_t oe,
                                   std::string_view new_text, TSNode nd, size_t nb, size_t ne);

/// The lines of body `b` that differ from body `a` as (old lines, new lines): as they are
/// when `scope` (the function's text) holds the old lines once, else with the lines
/// around them taken along (above first) until it does, while the old lines stay at most
/// half of `a`'s; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> unique_hunk(std::string_view a, std::string_view b,
                                                               std::string_view scope);

}  // namespace sitepatch::python::detail
