// capture's reading of a change inside one function (capture_body.hpp). A line typed
// above a statement used to become the whole body (its context line, an `else:`, was
// found twice), and a body that did not come back exactly the whole class: these give
// the few lines a person typed, placed by a statement of the function.
#include "python/capture_body.hpp"

#include <algorithm>
#include <vector>

#include "python/capture_text.hpp"
#include "python/plan.hpp"
#include "python/text.hpp"

namespace sitepatch::python::detail {
namespace {

struct Lines {
  size_t begin = 0, end = 0;  // bytes of whole lines
};

// The line span of a statement: from its line's start to after its last line.
Lines span_of(std::string_view src, TSNode s) {
  return {text::line_begin(src, ts_node_start_byte(s)), text::line_after(src, ts_node_end_byte(s))};
}

// A statement as an anchor reads: a compound one by its header, a simple one whole, its
// continuation lines without the indentation of its first.
std::string anchor_text(std::string_view src, TSNode s) {
  std::string header = statement_header(src, s);
  if (!header.empty()) return header;
  std::string_view indent = text::leading_ws(src, text::line_begin(src, ts_node_start_byte(s)));
  std::string out;
  for (size_t at = ts_node_start_byte(s), end = ts_node_end_byte(s); at < end;) {
    size_t next = std::min(end, text::line_after(src, at));
    std::string_view line = src.substr(at, next - at);
    if (!out.empty() && line.substr(0, indent.size()) == indent) line.remove_prefix(indent.size());
    out += line;
    at = next;
  }
  return std::string(text::strip(out));
}

TSNode sibling(TSNode s, bool next) {
  for (TSNode c = next ? ts_node_next_named_sibling(s) : ts_node_prev_named_sibling(s); !ts_node_is_null(c);
       c = next ? ts_node_next_named_sibling(c) : ts_node_prev_named_sibling(c))
    if (!ts::is(c, "comment")) return c;
  return TSNode{};
}

// The statements lines [b, e) of `src` hold, when they are whole statements of one block
// and comments, nothing else: the outermost ones, in order; empty otherwise.
std::vector<TSNode> whole_statements(std::string_view src, TSNode def, Lines run) {
  std::vector<TSNode> tops;
  for (TSNode s : body_statements(def)) {
    Lines l = span_of(src, s);
    bool inside = run.begin <= l.begin && l.end <= run.end;
    bool around = l.begin < run.begin && l.end >= run.end;
    bool apart = l.end <= run.begin || l.begin >= run.end;
    if (!inside && !around && !apart) return {};  // the run cuts this statement
    if (inside && (tops.empty() || ts_node_start_byte(s) >= ts_node_end_byte(tops.back()))) tops.push_back(s);
  }
  if (tops.empty()) return {};
  TSNode parent = ts_node_parent(tops.front());
  for (TSNode s : tops)
    if (!ts_node_eq(ts_node_parent(s), parent)) return {};
  // Every other line blank or a comment.
  for (size_t at = run.begin; at < run.end; at = text::line_after(src, at)) {
    std::string_view line = text::strip(src.substr(at, text::line_after(src, at) - at));
    bool held = std::any_of(tops.begin(), tops.end(), [&](TSNode s) {
      Lines l = span_of(src, s);
      return l.begin <= at && at < l.end;
    });
    if (!held && !line.empty() && line.front() != '#') return {};
  }
  return tops;
}

// Where the added lines may sit among equal lines: the run [p, q) of `b`'s lines slides
// while the line leaving it equals the line joining it. Every position, top first.
std::vector<std::pair<size_t, size_t>> positions(const std::vector<std::string_view>& b, size_t p, size_t q) {
  while (p > 0 && b[p - 1] == b[q - 1]) --p, --q;
  std::vector<std::pair<size_t, size_t>> out{{p, q}};
  while (q < b.size() && b[p] == b[q]) out.push_back({++p, ++q});
  return out;
}

// The insertion at one position of the added lines, or nullopt.
std::optional<Insertion> placed(std::string_view old_text, TSNode od, std::string_view new_text, TSNode nd, Lines run) {
  std::string_view first = new_text.substr(run.begin, text::line_after(new_text, run.begin) - run.begin);
  std::string_view last = new_text.substr(text::line_begin(new_text, run.end - 1), run.end - text::line_begin(new_text, run.end - 1));
  if (text::strip(first).empty() || text::strip(last).empty()) return std::nullopt;  // code keeps no edge blank lines
  std::vector<TSNode> tops = whole_statements(new_text, nd, run);
  if (tops.empty()) return std::nullopt;
  Insertion ins;
  ins.begin = run.begin;
  ins.end = run.end;
  ins.indent = std::string(text::leading_ws(new_text, text::line_begin(new_text, ts_node_start_byte(tops.front()))));
  // The statement above, right above the new lines; else the one below, right below.
  for (bool before : {false, true}) {
    TSNode s = sibling(before ? tops.back() : tops.front(), before);
    if (ts_node_is_null(s)) continue;
    Lines l = span_of(new_text, s);
    if (before ? l.begin != run.end : l.end != run.begin) continue;
    std::string anchor = anchor_text(new_text, s);
    if (!lone_anchor(old_text, od, anchor)) continue;
    ins.anchor = std::move(anchor);
    ins.before = before;
    return ins;
  }
  return std::nullopt;
}

// Whether `scope` holds `s` exactly once, overlapping matches counted: three lines `x = 1`
// hold two of `x = 1` twice, which a count that skips past each match calls once.
bool found_once(std::string_view scope, std::string_view s) {
  size_t first = scope.find(s);
  return first != std::string_view::npos && scope.find(s, first + 1) == std::string_view::npos;
}

}  // namespace

std::optional<Insertion> insertion(std::string_view old_text, TSNode od, size_t ob, size_t oe,
                                   std::string_view new_text, TSNode nd, size_t nb, size_t ne) {
  LineRun r = differing_lines(old_text.substr(ob, oe - ob), new_text.substr(nb, ne - nb));
  if (r.pre != r.a_end || r.b_end == r.pre) return std::nullopt;  // lines removed or changed, or none added
  std::vector<size_t> at{nb};  // the byte each line of the new body starts at
  for (auto line : r.b) at.push_back(at.back() + line.size());
  for (auto [p, q] : positions(r.b, r.pre, r.b_end))
    if (auto ins = placed(old_text, od, new_text, nd, {at[p], at[q]})) return ins;
  return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> unique_hunk(std::string_view a, std::string_view b,
                                                               std::string_view scope) {
  auto h = hunk(a, b);
  if (!h) return std::nullopt;
  if (h->first.size() < a.size() && found_once(scope, h->first)) return h;
  // Lines around it from `a` (the same on both sides), above first.
  LineRun r = differing_lines(a, b);
  size_t lo = r.pre, hi = r.a_end, hi_b = r.b_end;
  auto old_lines = [&] {
    std::string s;
    for (size_t i = lo; i < hi; ++i) s += r.a[i];
    return s;
  };
  while (2 * (hi - lo) <= r.a.size()) {
    std::string o = old_lines();
    if (!text::strip(o).empty() && found_once(scope, o)) {
      std::string n;
      for (size_t i = lo; i < hi_b; ++i) n += r.b[i];  // the context below is the same on both sides
      return std::make_pair(o, n);
    }
    if (lo > 0) --lo;
    else if (hi < r.a.size()) ++hi, ++hi_b;
    else break;
  }
  return std::nullopt;
}

}  // namespace sitepatch::python::detail
