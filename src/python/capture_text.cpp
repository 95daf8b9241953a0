// capture's text helpers (capture_text.hpp): lines, hunks, trimmed replace texts, and
// imports placed elsewhere than ensure-import puts them.
#include "python/capture_text.hpp"

#include <algorithm>

#include "python/replace_match.hpp"
#include "python/text.hpp"

namespace sitepatch::python::detail {

using recipe::Action;
using recipe::Edit;

LineRun differing_lines(std::string_view a, std::string_view b) {
  auto lines = [](std::string_view t) {
    std::vector<std::string_view> out;
    for (size_t at = 0; at < t.size();) {
      size_t end = t.find('\n', at);
      end = end == std::string_view::npos ? t.size() : end + 1;
      out.push_back(t.substr(at, end - at));
      at = end;
    }
    return out;
  };
  LineRun r{lines(a), lines(b)};
  while (r.pre < r.a.size() && r.pre < r.b.size() && r.a[r.pre] == r.b[r.pre]) ++r.pre;
  size_t suf = 0;
  while (suf < r.a.size() - r.pre && suf < r.b.size() - r.pre &&
         r.a[r.a.size() - 1 - suf] == r.b[r.b.size() - 1 - suf])
    ++suf;
  r.a_end = r.a.size() - suf;
  r.b_end = r.b.size() - suf;
  return r;
}

// The lines of `b` that differ from `a` as one run (old lines, new lines), with a line of
// context when the old run is empty (replace needs something to find); nullopt when the
// texts are equal.
std::optional<std::pair<std::string, std::string>> hunk(std::string_view a, std::string_view b) {
  LineRun r = differing_lines(a, b);
  if (r.pre == r.a_end && r.pre == r.b_end) return std::nullopt;
  if (r.pre == r.a_end) {  // lines only added: take the one before (or after) along
    if (r.pre > 0) --r.pre;
    else if (r.a_end < r.a.size()) ++r.a_end, ++r.b_end;
    else return std::nullopt;
  }
  std::string old_lines, new_lines;
  for (size_t i = r.pre; i < r.a_end; ++i) old_lines += r.a[i];
  for (size_t i = r.pre; i < r.b_end; ++i) new_lines += r.b[i];
  return std::make_pair(old_lines, new_lines);
}

size_t count_of(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

// A replace's old and new lines as a person writes them: without the indentation, the
// blank lines and the line end both share, and each later line indented relative to the
// first (as replace places them: replace_match.hpp), when the old text stays unique in
// `def` (replace matches the text, so what was taken off both sides is kept as it is).
std::pair<std::string, std::string> trimmed(const std::pair<std::string, std::string>& h, std::string_view def) {
  std::string_view a = h.first, b = h.second;
  size_t lead = 0;
  while (lead < a.size() && lead < b.size() && a[lead] == b[lead] &&
         (a[lead] == ' ' || a[lead] == '\t' || a[lead] == '\n'))
    ++lead;
  while (!a.empty() && !b.empty() && a.back() == '\n' && b.back() == '\n' && a.size() > lead && b.size() > lead) {
    a.remove_suffix(1);
    b.remove_suffix(1);
  }
  // The texts begin on the line after the last shared line end, after as much of the
  // shared whitespace there as every later line also begins with (a later line less
  // indented than the first keeps the difference on the first).
  size_t line = a.substr(0, lead).rfind('\n');
  line = line == std::string_view::npos ? 0 : line + 1;
  for (size_t k = lead - line + 1; k-- > 0;) {
    std::string_view base = a.substr(line, k);
    auto old_text = detail::Block::unplaced(a.substr(line + k), base);
    auto new_text = old_text ? detail::Block::unplaced(b.substr(line + k), base) : std::nullopt;
    if (!old_text || !new_text) continue;
    if (text::strip(*old_text).empty() || detail::block_matches(def, detail::Block(*old_text, false)).size() != 1)
      return h;
    return {*old_text, *new_text};
  }
  return h;
}

namespace {

// The first line of `text` equal to `line` (with its end) taken out, and the blank lines
// right after it (a person leaves two before a def, ensure-import none); where it was
// and what was taken, or npos when no line is. The blank lines only with `blanks`.
std::pair<size_t, std::string> take_line(std::string& text, const std::string& line, bool blanks) {
  for (size_t at = 0; at < text.size(); at = text::line_after(text, at)) {
    if (text.compare(at, line.size(), line) != 0 || (at + line.size() != text.size() && line.back() != '\n')) continue;
    size_t end = at + line.size();
    while (blanks && end < text.size() && text[end] == '\n') ++end;
    std::string taken = text.substr(at, end - at);
    text.erase(at, end - at);
    return {at, taken};
  }
  return {std::string::npos, ""};
}

// Whether `made` and `edited` differ only in where the ensure-imports' lines are (and
// the blank lines after them): a person puts `import functools` beside `import
// contextlib`, ensure-import puts it after the last import. Such a file is captured by
// the edits; the result says where each is (nullopt: they differ otherwise; empty: they
// are the same).
std::optional<std::vector<MovedImport>> moved_with(std::string made, std::string edited, const std::vector<Edit>& edits,
                                                   bool blanks) {
  if (made == edited) return std::vector<MovedImport>{};
  std::vector<MovedImport> moved;
  for (const Edit& e : edits) {
    if (e.action != Action::none || e.ensure_import.empty()) continue;
    std::string line = e.ensure_import + "\n";
    std::string a = made, b = edited;
    auto [in_made, made_taken] = take_line(made, line, blanks);
    auto [in_edited, edited_taken] = take_line(edited, line, blanks);
    if (in_made == std::string::npos || in_edited == std::string::npos) return std::nullopt;
    if (in_made == in_edited && made_taken == edited_taken) continue;
    auto line_of = [](const std::string& t, size_t at) { return int(std::count(t.begin(), t.begin() + long(at), '\n')) + 1; };
    moved.push_back({e.ensure_import, line_of(b, in_edited), line_of(a, in_made)});
  }
  if (moved.empty() || made != edited) return std::nullopt;
  return moved;
}

// The lines alone first (an import typed above its neighbours); then with the blank
// lines after them (one typed above a def, its two blank lines with it).
}  // namespace

std::optional<std::vector<MovedImport>> moved_imports(const std::string& made, const std::string& edited,
                                                      const std::vector<Edit>& edits) {
  if (auto plain = moved_with(made, edited, edits, false)) return plain;
  return moved_with(made, edited, edits, true);
}

}  // namespace sitepatch::python::detail
