// replace-function (the whole definition) and replace (`old` -> `new` inside the target).
#include <algorithm>

#include "python/plan.hpp"

namespace sitepatch::python {
namespace {

// Positions of `needle` in `hay`, left to right, not overlapping.
std::vector<size_t> occurrences(std::string_view hay, std::string_view needle) {
  std::vector<size_t> out;
  if (needle.empty()) return out;
  for (size_t p = hay.find(needle); p != std::string_view::npos; p = hay.find(needle, p + needle.size()))
    out.push_back(p);
  return out;
}

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

// Matching is done on [begin, end) of the text with LF line endings; `map` takes each LF
// offset back to the original (a "\r\n" pair maps to its '\r').
bool replace_in(const Context& cx, size_t begin, size_t end, const std::string& where, const recipe::Edit& e,
                ActionOut& out, EditResult& r) {
  std::string old_lf = text::to_lf(e.old_text), new_lf = text::to_lf(e.new_text);
  if (old_lf.empty()) return fail(r, Failure::invalid, "replace needs a non-empty `old`");
  std::string_view target = cx.src.substr(begin, end - begin);

  std::string lf;
  std::vector<size_t> map;
  lf.reserve(target.size());
  map.reserve(target.size() + 1);
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == '\r' && i + 1 < target.size() && target[i + 1] == '\n') {
      map.push_back(begin + i);
      lf += '\n';
      ++i;
      continue;
    }
    map.push_back(begin + i);
    lf += target[i];
  }
  map.push_back(end);

  // An `old` inside an occurrence of `new` is what an earlier apply left: not live.
  std::vector<size_t> news = occurrences(lf, new_lf);
  std::vector<size_t> live;
  size_t k = 0;
  for (size_t p : occurrences(lf, old_lf)) {
    while (k < news.size() && news[k] + new_lf.size() <= p) ++k;
    bool inside = false;
    for (size_t j = k; j < news.size() && news[j] <= p; ++j)
      if (p + old_lf.size() <= news[j] + new_lf.size()) inside = true;
    if (!inside) live.push_back(p);
  }
  // Applied already: no `old` left, and `new` as many times as the edit put it there. A
  // `new` that merely occurs somewhere in the function is no sign of an earlier apply (a
  // deletion leaves no sign but the absence).
  if (live.empty() && (new_lf.empty() || int(news.size()) == e.count)) {
    out.already = true;
    if (r.line == 0 && !news.empty())
      r.line = int(std::count(cx.src.begin(), cx.src.begin() + long(map[news.front()]), '\n')) + 1;
    return true;
  }
  if (int(live.size()) != e.count)
    return fail(r, Failure::mismatch, "`old` matched " + text::times(live.size()) + " in " + where +
                                          ", expected " + std::to_string(e.count));
  if (r.line == 0) r.line = int(std::count(cx.src.begin(), cx.src.begin() + long(map[live.front()]), '\n')) + 1;
  std::string replacement = text::with_eol(new_lf, cx.style.eol);
  for (size_t p : live) {
    auto [from, to] = new_lf.empty() ? whole_line(lf, p, old_lf.size()) : std::pair{p, p + old_lf.size()};
    out.splices.push_back({map[from], map[to], replacement});
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
