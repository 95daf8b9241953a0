#include "engine/edits/result_check.hpp"

#include <algorithm>

namespace sitepatch::engine::detail {
namespace {

// Byte offset of 1-based `line`:`column` in `text` (column 0: the line's start).
size_t offset_of(std::string_view text, BadSpot spot) {
  size_t at = 0;
  for (int l = 1; l < spot.line; ++l) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) return text.size();
    at = nl + 1;
  }
  size_t end = text.find('\n', at);
  if (end == std::string_view::npos) end = text.size();
  return std::min(at + size_t(std::max(spot.column - 1, 0)), end);
}

}  // namespace

void carry_spans(std::vector<EditSpan>& spans, const std::vector<python::TextChange>& changes,
                 const std::vector<size_t>& edit_of) {
  // A position after a change moves by what the change added; one inside it goes to
  // its new bounds. Changes are in order of position: a binary search finds the last
  // one ending at or before a position.
  std::vector<long long> delta(changes.size() + 1, 0);
  for (size_t i = 0; i < changes.size(); ++i)
    delta[i + 1] = delta[i] + (long long)(changes[i].new_end - changes[i].new_begin) -
                   (long long)(changes[i].old_end - changes[i].old_begin);
  auto move = [&](size_t p, bool is_end) {
    auto it = std::upper_bound(changes.begin(), changes.end(), p,
                               [](size_t v, const python::TextChange& c) { return v < c.old_end; });
    size_t k = size_t(it - changes.begin());
    if (k < changes.size() && changes[k].old_begin < p) return is_end ? changes[k].new_end : changes[k].new_begin;
    return size_t((long long)p + delta[k]);
  };
  for (auto& s : spans) {
    s.begin = move(s.begin, false);
    s.end = std::max(s.begin, move(s.end, true));
  }
  for (const auto& c : changes)
    if (c.edit < edit_of.size() && c.new_end > c.new_begin) spans.push_back({edit_of[c.edit], c.new_begin, c.new_end});
}

const EditSpan& culprit(const std::vector<EditSpan>& spans, std::string_view text, BadSpot spot) {
  size_t at = offset_of(text, spot);
  const EditSpan* before = nullptr;
  for (const auto& s : spans) {
    if (s.begin <= at && at < s.end) return s;
    // An error reported just past an edit's text (a missing `)`) is still that edit's.
    if (s.begin <= at && (!before || s.begin >= before->begin)) before = &s;
  }
  return before ? *before : spans.front();
}

std::string excerpt(std::string_view text, BadSpot spot, const std::string& label) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at <= text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) {
      if (at < text.size()) lines.push_back(text.substr(at));
      break;
    }
    std::string_view l = text.substr(at, nl - at);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    at = nl + 1;
  }
  int n = int(lines.size());
  int line = std::clamp(spot.line, 1, std::max(n, 1));
  int first = std::max(1, line - 2), last = std::min(n, line + 2);
  size_t width = std::to_string(last).size();
  std::string out = "    " + label + ", as the edits would make it:\n";
  for (int l = first; l <= last; ++l) {
    std::string num = std::to_string(l);
    std::string_view body = lines[size_t(l - 1)];
    out += "    " + std::string(l == line ? "> " : "  ") + std::string(width - num.size(), ' ') + num + " | ";
    out += body;
    out += "\n";
    if (l == line && spot.column > 0) {
      // Tabs stay tabs so that the caret lines up in a terminal.
      std::string pad;
      for (size_t i = 0; i + 1 < size_t(spot.column) && i < body.size(); ++i) pad += body[i] == '\t' ? '\t' : ' ';
      out += "    " + std::string(width + 2, ' ') + " | " + pad + "^\n";
    }
  }
  if (!out.empty()) out.pop_back();
  return out;
}

int line_of(std::string_view text, size_t off) {
  off = std::min(off, text.size());
  return 1 + int(std::count(text.begin(), text.begin() + long(off), '\n'));
}

}  // namespace sitepatch::engine::detail
