// replace-function (the whole definition) and replace (`old` -> `new` inside the target).
#include <algorithm>

#include "python/plan.hpp"
#include "python/replace_match.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::python {
namespace {

// A deletion of all a line holds takes the line with it (its indentation and its end),
// not only the text: [at, at + n) widened to the whole line when nothing else is on it.
std::pair<size_t, size_t> whole_line(std::string_view lf, size_t at, size_t n) {
  size_t start = lf.rfind('\n', at == 0 ? 0 : at - 1);
  start = at == 0 || start == std::string_view::npos ? 0 : start + 1;
  if (lf.substr(start, at - start).find_first_not_of(" \t") != std::string_view::npos) return {at, at + n};
  size_t end = at + n;
  bool ends_line = n > 0 && lf[end - 1] == '\n';
  if (!ends_line) {
    if (end < lf.size() && lf[end] != '\n') return {at, at + n};
    if (end < lf.size()) ++end;
  }
  return {start, end};
}

}  // namespace

bool replace_function(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                      EditResult& r) {
  if (ts::is(d.node, "assignment"))
    return fail(r, Failure::invalid, d.qualified + " is a variable: replace-function needs a function or class");
  if (text::strip(e.code).empty()) return fail(r, Failure::invalid, "replace-function needs `code`");
  size_t begin = text::line_begin(cx.src, ts_node_start_byte(d.outer));
  size_t end = text::line_after(cx.src, ts_node_end_byte(d.outer));
  std::string indent(indent_at(cx.src, begin));
  std::string code = reindent_code(e.code, indent, cx.style);
  if (same_code(cx.src.substr(begin, end - begin), code, indent)) {
    out.already = true;
    return true;
  }
  out.splices.push_back({begin, end, fit_end(cx.src, end, code, cx.style.eol)});
  return true;
}

namespace {

using detail::Block;
using detail::Match;

// The target's text with LF line endings, and for each of its offsets the original one
// (a "\r\n" pair maps to its '\r'; one past the end to `end`).
struct LfText {
  std::string lf;
  std::vector<size_t> map;
};

LfText lf_text(std::string_view src, size_t begin, size_t end) {
  LfText t;
  t.lf.reserve(end - begin);
  t.map.reserve(end - begin + 1);
  for (size_t i = begin; i < end; ++i) {
    t.map.push_back(i);
    if (src[i] == '\r' && i + 1 < end && src[i + 1] == '\n') ++i;
    t.lf += src[i];
  }
  t.map.push_back(end);
  return t;
}

// What one reading of the edit finds in the target.
struct Found {
  Block old_block, new_block;
  std::vector<Match> live;  // `old` on token boundaries, not inside a `new`
  std::vector<Match> news;  // `new` on token boundaries
  std::vector<Match> cuts;  // `old` where it would cut a token of the module
};

bool clean(const Context& cx, const LfText& t, const Match& m) {
  return !detail::cut_at(cx.root, cx.src, t.map[m.at]) && !detail::cut_at(cx.root, cx.src, t.map[m.at + m.size]);
}

Found find_texts(const Context& cx, const LfText& t, const recipe::Edit& e, bool absolute) {
  Found f{Block(text::to_lf(e.old_text), absolute), Block(text::to_lf(e.new_text), absolute), {}, {}, {}};
  for (const Match& m : detail::block_matches(t.lf, f.new_block))
    if (clean(cx, t, m)) f.news.push_back(m);
  // An `old` inside an occurrence of `new` is what an earlier apply left: not live.
  size_t k = 0;
  for (const Match& m : detail::block_matches(t.lf, f.old_block)) {
    if (!clean(cx, t, m)) {
      f.cuts.push_back(m);
      continue;
    }
    while (k < f.news.size() && f.news[k].at + f.news[k].size <= m.at) ++k;
    bool inside = false;
    for (size_t j = k; j < f.news.size() && f.news[j].at <= m.at; ++j)
      if (m.at + m.size <= f.news[j].at + f.news[j].size) inside = true;
    if (!inside) f.live.push_back(m);
  }
  return f;
}

// Applied already: no `old` left, and `new` as many times as the edit put it there. A
// `new` that merely occurs somewhere in the function is no sign of an earlier apply (a
// deletion leaves no sign but the absence).
bool already(const Found& f, const recipe::Edit& e) {
  return f.live.empty() && (e.new_text.empty() || int(f.news.size()) == e.count);
}

// The reading of `old` and `new` the edit is applied under. A recipe read as relative
// whose texts are found only at their written columns was written for the absolute
// reading (by capture, before history record format 3): that reading is kept for it.
Found reading(const Context& cx, const LfText& t, const recipe::Edit& e) {
  bool absolute = e.indent == recipe::ReplaceIndent::absolute;
  Found f = find_texts(cx, t, e, absolute);
  // A `new` found where this reading puts it is an earlier apply of it (a deletion's
  // absence tells neither reading).
  bool placed_new = !e.new_text.empty() && already(f, e);
  if (absolute || int(f.live.size()) == e.count || placed_new || (!f.old_block.moves() && !f.new_block.moves()))
    return f;
  Found as_written = find_texts(cx, t, e, true);
  if (int(as_written.live.size()) == e.count || already(as_written, e)) return as_written;
  return f;
}

int line_number(std::string_view src, size_t off) {
  return int(std::count(src.begin(), src.begin() + long(off), '\n')) + 1;
}

// `s` as a message quotes it: its first line, cut short.
std::string quoted_start(std::string_view s) {
  size_t nl = s.find('\n');
  std::string_view line = s.substr(0, std::min(nl, size_t(60)));
  while (line.size() < s.size() && !line.empty() && (static_cast<unsigned char>(s[line.size()]) & 0xC0) == 0x80)
    line.remove_suffix(1);  // not inside a UTF-8 character
  return util::printable(line) + (line.size() < s.size() ? "..." : "");
}

// The refusal of an `old` found only where it would cut a token: the first such place
// widened to the tokens it cuts, and its line.
std::string cut_message(const Context& cx, const LfText& t, const Found& f, const std::string& where) {
  const Match& m = f.cuts.front();
  size_t from = t.map[m.at], to = t.map[m.at + m.size];
  if (auto c = detail::cut_at(cx.root, cx.src, from)) from = c->begin;
  if (auto c = detail::cut_at(cx.root, cx.src, to)) to = c->end;
  std::string more = f.cuts.size() > 1 ? " and " + std::to_string(f.cuts.size() - 1) + " more" : "";
  std::string place = quoted_start(cx.src.substr(from, to - from));
  return "`" + quoted_start(f.old_block.text()) + "` is found in " + where + " only inside `" + place + "` (line " +
         std::to_string(line_number(cx.src, from)) + ")" + more +
         ", which it would cut: `old` must begin and end where a name, number or operator does";
}

bool replace_in(const Context& cx, size_t begin, size_t end, const std::string& where, const recipe::Edit& e,
                ActionOut& out, EditResult& r) {
  if (e.old_text.empty()) return fail(r, Failure::invalid, "replace needs a non-empty `old`");
  LfText t = lf_text(cx.src, begin, end);
  Found f = reading(cx, t, e);
  if (already(f, e)) {
    out.already = true;
    if (r.line == 0 && !f.news.empty()) r.line = line_number(cx.src, t.map[f.news.front().at]);
    return true;
  }
  if (f.live.empty() && !f.cuts.empty()) return fail(r, Failure::mismatch, cut_message(cx, t, f, where));
  if (int(f.live.size()) != e.count)
    return fail(r, Failure::mismatch, "`old` matched " + text::times(f.live.size()) + " in " + where +
                                          ", expected " + std::to_string(e.count));
  if (r.line == 0) r.line = line_number(cx.src, t.map[f.live.front().at]);
  for (const Match& m : f.live) {
    // `new` placed where this match begins: its later lines take the indentation there.
    std::string placed = f.new_block.placed(detail::base_at(t.lf, m.at));
    auto [from, to] = placed.empty() ? whole_line(t.lf, m.at, m.size) : std::pair{m.at, m.at + m.size};
    out.splices.push_back({t.map[from], t.map[to], text::with_eol(placed, cx.style.eol)});
  }
  return true;
}

}  // namespace

bool replace_text(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out, EditResult& r) {
  // The target's lines, so that an `old` written as a block (ending in a newline) matches.
  size_t begin = text::line_begin(cx.src, ts_node_start_byte(d.outer));
  size_t end = text::line_after(cx.src, ts_node_end_byte(d.outer));
  return replace_in(cx, begin, end, d.qualified, e, out, r);
}

bool replace_in_module(const Context& cx, const recipe::Edit& e, ActionOut& out, EditResult& r) {
  return replace_in(cx, 0, cx.src.size(), "the module", e, out, r);
}

}  // namespace sitepatch::python
