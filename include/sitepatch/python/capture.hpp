#pragma once
// From two texts of one module, pip's and a hand-edited one, to the named edits that make
// the second from the first: for each changed definition the smallest action that does
// (a decorator added or removed, a body, a value, a new helper after its neighbour, an
// import), the whole definition only when nothing smaller reproduces it. Pure: no I/O.
#include <string>
#include <vector>

#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::python {

/// Lines of a change no named edit can make (a module-level statement added, removed or
/// changed), 1-based and inclusive; a side with no lines has first = 0.
struct OutsideChange {
  int old_first = 0, old_last = 0;
  int new_first = 0, new_last = 0;
  std::string text;  // the edited lines (the removed ones when nothing replaced them)
};

/// An import the edited text has on another line than ensure-import puts it (beside a
/// neighbour, say): the recipe adds it, the record keeps the edited bytes.
struct MovedImport {
  std::string import;   // "import functools"
  int edited_line = 0;  // where the edited text has it
  int recipe_line = 0;  // where the recipe's ensure-import puts it
};

struct Capture {
  std::vector<recipe::Edit> edits;     // target, kind, action, code; no module or file yet
  std::vector<OutsideChange> outside;  // left out of `edits`
  std::vector<MovedImport> moved;      // ensure-imports the edited text has elsewhere
  /// The edits, applied to the old text, give the new text byte for byte (but for where
  /// the `moved` imports are). Never with outside changes.
  bool exact = false;
  std::string problem;  // why the texts could not be compared (not UTF-8, ...), else ""
};

/// The named edits from `old_text` to `new_text` (`name` for messages), checked by
/// applying them to `old_text`: a file whose small edits do not reproduce it gets whole
/// definitions instead, and when even those do not, `exact` stays false. With
/// `whole_file`, such a file (or one with outside changes) is one `replace-module`.
Capture capture(const std::string& old_text, const std::string& new_text, const std::string& name = "",
                bool whole_file = false);

}  // namespace sitepatch::python
