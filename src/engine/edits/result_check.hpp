#pragma once
// When an edited file does not parse or compile: which edit wrote the bad lines, and
// a message that shows them (the user cannot see the patched file: it is not written).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/python/module.hpp"

namespace sitepatch::engine::detail {

/// Bytes [begin, end) of a file's new text that one edit (flattened index) wrote.
struct EditSpan {
  size_t edit;
  size_t begin, end;
};

/// `spans`, positions in the text `changes` were made to, moved to the text after them;
/// then one span per change, its edit being `edit_of[change.edit]`.
void carry_spans(std::vector<EditSpan>& spans, const std::vector<python::TextChange>& changes,
                 const std::vector<size_t>& edit_of);

/// Where a text fails to parse or compile (1-based; column 0 when unknown).
struct BadSpot {
  int line = 1;
  int column = 0;
};

/// The span most likely at fault for `spot` in `text`: the one holding it, else the
/// last one before it (an unclosed bracket is reported further down), else the first.
/// `spans` must not be empty.
const EditSpan& culprit(const std::vector<EditSpan>& spans, std::string_view text, BadSpot spot);

/// The lines of `text` around `spot`, numbered as in `label` ("mod.py"), with a caret
/// under the column; each line indented by four spaces.
std::string excerpt(std::string_view text, BadSpot spot, const std::string& label);

/// The 1-based line of `text` holding byte `off`.
int line_of(std::string_view text, size_t off);

}  // namespace sitepatch::engine::detail
