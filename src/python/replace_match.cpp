// Where a replace's texts stand in a file (replace_match.hpp): blocks placed relative to
// where a match begins, and the module's tokens a match must not cut.
#include "python/replace_match.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "python/plan.hpp"

namespace sitepatch::python::detail {
namespace {

// Whether byte `x` is inside a literal of `literal` (sorted, not overlapping) and not
// its first byte: a line that begins there is the literal's content.
bool in_literal(const std::vector<text::Range>& literal, size_t x) {
  auto it = std::lower_bound(literal.begin(), literal.end(), x,
                             [](const text::Range& r, size_t v) { return r.begin < v; });
  return it != literal.begin() && x < std::prev(it)->end;
}

// A byte of a word: what a name or number in a string's content or a comment is made of
// (bytes of UTF-8 characters past ASCII count as letters, as Python's names take them).
bool word_byte(char ch) {
  auto c = static_cast<unsigned char>(ch);
  return c == '_' || c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

Block::Block(std::string_view text, bool absolute) : text_(text), absolute_(absolute) {
  if (absolute_ || text_.find('\n') == std::string::npos) return;
  // Only a snippet with quotes is parsed for its literals.
  std::vector<text::Range> literal = string_ranges(text_);
  for (size_t nl = text_.find('\n'); nl != std::string::npos; nl = text_.find('\n', nl + 1)) {
    size_t at = nl + 1;
    if (at < text_.size() && text_[at] != '\n' && !in_literal(literal, at)) starts_.push_back(at);
  }
  prefixed_ = starts_.size();
}

std::string Block::placed(std::string_view base) const {
  if (!moves() || base.empty()) return text_;
  std::string out;
  out.reserve(text_.size() + starts_.size() * base.size());
  size_t from = 0;
  for (size_t at : starts_) {
    out.append(text_, from, at - from);
    out += base;
    from = at;
  }
  out.append(text_, from, std::string::npos);
  return out;
}

std::optional<std::string> Block::unplaced(std::string_view placed, std::string_view base) {
  if (base.empty()) return std::string(placed);
  // The lines placing would put `base` on are found in `placed` itself (the same lines
  // begin inside a literal with or without it); each must begin with it.
  Block as_is(placed, false);
  std::string out;
  size_t from = 0;
  for (size_t at : as_is.starts_) {
    if (placed.substr(at, base.size()) != base) return std::nullopt;
    out.append(placed.substr(from, at - from));
    from = at + base.size();
  }
  out.append(placed.substr(from));
  // Only what reads back as the same bytes.
  if (Block(out, false).placed(base) != placed) return std::nullopt;
  return out;
}

std::string_view base_at(std::string_view hay, size_t at) {
  size_t begin = text::line_begin(hay, at);
  size_t end = begin;
  while (end < at && (hay[end] == ' ' || hay[end] == '\t')) ++end;
  return hay.substr(begin, end - begin);
}

std::vector<Match> block_matches(std::string_view hay, const Block& b) {
  std::vector<Match> out;
  const std::string& t = b.text();
  if (t.empty()) return out;
  if (!b.moves()) {
    for (size_t p = hay.find(t); p != std::string_view::npos; p = hay.find(t, p + t.size()))
      out.push_back({p, t.size()});
    return out;
  }
  // Line 1 (with its line end) is found as written; the lines after it depend on the
  // indentation before it, and a file has few: each is placed once.
  std::string_view first = std::string_view(t).substr(0, t.find('\n') + 1);
  std::vector<std::pair<std::string, std::string>> placed;  // base -> the block there
  auto at_base = [&](std::string_view base) -> const std::string& {
    for (auto& [b_, s] : placed)
      if (b_ == base) return s;
    placed.emplace_back(std::string(base), b.placed(base));
    return placed.back().second;
  };
  for (size_t p = hay.find(first); p != std::string_view::npos;) {
    const std::string& want = at_base(base_at(hay, p));
    if (hay.compare(p, want.size(), want) == 0) {
      out.push_back({p, want.size()});
      p = hay.find(first, p + want.size());
    } else {
      p = hay.find(first, p + 1);
    }
  }
  return out;
}

std::optional<text::Range> cut_at(TSNode root, std::string_view src, size_t off) {
  if (off == 0 || off >= src.size()) return std::nullopt;
  // The smallest node holding both the byte before `off` and the one at it.
  TSNode n = ts_node_descendant_for_byte_range(root, uint32_t(off - 1), uint32_t(off + 1));
  if (ts_node_is_null(n)) return std::nullopt;
  size_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
  if (ts::is(n, "string_content") || ts::is(n, "comment")) {
    // Free text: only a word is cut (`10` in "version 10"), not the text between words.
    if (!word_byte(src[off - 1]) || !word_byte(src[off])) return std::nullopt;
    size_t wb = off, we = off;
    while (wb > b && word_byte(src[wb - 1])) --wb;
    while (we < e && word_byte(src[we])) ++we;
    return text::Range{wb, we};
  }
  if (ts_node_child_count(n) == 0 && b < off && off < e) return text::Range{b, e};
  return std::nullopt;  // between two children of `n`: between tokens
}

}  // namespace sitepatch::python::detail
