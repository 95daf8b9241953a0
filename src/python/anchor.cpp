// insert-before, and insert-after with `anchor:`: new statements beside one statement of
// a function's body. The anchor is found by statement, not by text, so that `x = 1`
// never matches inside `xx = 1` or a comment, and by its lines with their spaces
// trimmed, so that it reads the same written at column 0 in a recipe as indented in the
// file. A compound statement (`if`, `for`, `with`, ...) is also found by its header alone.
#include <algorithm>

#include "python/plan.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::python {
namespace {

void collect(TSNode n, std::vector<TSNode>& out) {
  for (TSNode c : ts::named_children(n)) {
    if (ts::is(c, "comment")) continue;
    if (!ts::is(c, "block")) {
      collect(c, out);  // a clause (else, except, case), or a decorated def's definition
      continue;
    }
    for (TSNode s : ts::named_children(c)) {
      if (ts::is(s, "comment")) continue;
      out.push_back(s);
      collect(s, out);
    }
  }
}

// The first block a compound statement holds, in source order; null for a simple one.
TSNode first_block(TSNode n) {
  for (TSNode c : ts::named_children(n)) {
    if (ts::is(c, "block")) return c;
    if (ts::is(c, "comment")) continue;
    TSNode inner = first_block(c);
    if (!ts_node_is_null(inner)) return inner;
  }
  return TSNode{};
}

int line_of(std::string_view src, size_t off) {
  return int(std::count(src.begin(), src.begin() + long(off), '\n')) + 1;
}

// Whether the statement has its lines to itself: nothing but indentation before it, and
// nothing but a comment after it (`a = 1; b = 2`, `if x: return` share theirs).
bool owns_lines(std::string_view src, TSNode s) {
  size_t begin = ts_node_start_byte(s), end = ts_node_end_byte(s);
  if (!text::strip(src.substr(text::line_begin(src, begin), begin - text::line_begin(src, begin))).empty())
    return false;
  std::string_view rest = text::strip(src.substr(end, text::line_after(src, end) - end));
  return rest.empty() || rest.front() == '#';
}

// Whether the lines right above `from` (`before`) or right below `to` are `code`, as
// many as it has; [b, e) is where those lines are.
bool code_beside(std::string_view src, size_t from, size_t to, std::string_view code, std::string_view indent,
                 bool before, size_t& b, size_t& e) {
  size_t k = size_t(std::count(code.begin(), code.end(), '\n'));
  if (before) {
    e = b = from;
    for (size_t i = 0; i < k; ++i) {
      if (b == 0) return false;
      b = text::line_begin(src, b - 1);
    }
  } else {
    b = e = to;
    for (size_t i = 0; i < k; ++i) {
      if (e >= src.size()) return false;
      e = text::line_after(src, e);
    }
  }
  return same_code(src.substr(b, e - b), code, indent);
}

std::string match_lines(std::string_view src, const std::vector<TSNode>& found) {
  std::string s = found.size() == 1 ? "line " : "lines ";
  for (size_t i = 0; i < found.size(); ++i)
    s += (i ? ", " : "") + std::to_string(line_of(src, ts_node_start_byte(found[i])));
  return s;
}

// The anchor as messages show it: its first line, backquoted, shortened.
std::string shown(std::string_view anchor) {
  std::string first(text::strip(anchor.substr(0, anchor.find('\n'))));
  bool more = first.size() > 60 || text::strip(anchor).find('\n') != std::string_view::npos;
  if (first.size() > 60) first.resize(57);
  return "`" + util::printable(first) + (more ? "...`" : "`");
}

}  // namespace

std::string anchor_key(std::string_view text) {
  std::string out;
  for (auto& line : util::split(text, '\n')) {
    std::string_view t = text::strip(line);
    if (t.empty()) continue;
    if (!out.empty()) out += '\n';
    out += t;
  }
  return out;
}

std::vector<TSNode> body_statements(TSNode def) {
  std::vector<TSNode> out;
  collect(def, out);
  return out;
}

std::string statement_header(std::string_view src, TSNode s) {
  TSNode block = first_block(s);
  if (ts_node_is_null(block)) return "";
  return std::string(text::strip(src.substr(ts_node_start_byte(s), ts_node_start_byte(block) - ts_node_start_byte(s))));
}

std::vector<TSNode> anchored(std::string_view src, TSNode def, std::string_view anchor) {
  std::string key = anchor_key(anchor);
  std::vector<TSNode> out;
  if (key.empty()) return out;
  for (TSNode s : body_statements(def))
    if (anchor_key(ts::text(src, s)) == key || anchor_key(statement_header(src, s)) == key) out.push_back(s);
  return out;
}

bool lone_anchor(std::string_view src, TSNode def, std::string_view anchor) {
  std::vector<TSNode> found = anchored(src, def, anchor);
  return found.size() == 1 && owns_lines(src, found.front());
}

bool insert_at_anchor(const Context& cx, const Def& d, const recipe::Edit& e, bool before, ActionOut& out,
                      EditResult& r) {
  std::string action(recipe::action_name(e.action));
  if (text::strip(e.code).empty()) return fail(r, Failure::invalid, action + " needs `code`");
  if (text::strip(e.anchor).empty()) return fail(r, Failure::invalid, action + " needs `anchor`");
  if (!ts::is(d.node, "function_definition"))
    return fail(r, Failure::invalid, d.qualified + " is a " + std::string(recipe::kind_name(d.kind)) +
                                         ": `anchor` is a statement of a function's body");
  std::vector<TSNode> found = anchored(cx.src, d.node, e.anchor);
  std::string quoted = "anchor " + shown(e.anchor);
  if (found.empty())
    return fail(r, Failure::mismatch, quoted + " matched no statement of " + d.qualified + " (lines " +
                                          std::to_string(d.line) + "-" +
                                          std::to_string(line_of(cx.src, ts_node_end_byte(d.node))) + "), expected 1");

  // Applied already: the code beside one match, and every other match inside that code
  // (new code may repeat the anchor's statement).
  std::vector<std::pair<TSNode, std::string>> places;  // a match, its code at its indentation
  for (TSNode s : found) {
    std::string indent(indent_at(cx.src, ts_node_start_byte(s)));
    places.push_back({s, reindent_code(e.code, indent, cx.style)});
    std::string_view code = places.back().second;
    size_t from = text::line_begin(cx.src, ts_node_start_byte(s)), to = text::line_after(cx.src, ts_node_end_byte(s));
    size_t b = 0, end = 0;
    if (!code_beside(cx.src, from, to, code, indent, before, b, end)) continue;
    bool rest_inside = std::all_of(found.begin(), found.end(), [&](TSNode o) {
      return ts_node_eq(o, s) || (b <= ts_node_start_byte(o) && ts_node_end_byte(o) <= end);
    });
    if (!rest_inside) continue;
    r.line = line_of(cx.src, ts_node_start_byte(s));
    out.already = true;
    return true;
  }
  if (found.size() > 1) {
    for (TSNode s : found) r.lines.push_back(line_of(cx.src, ts_node_start_byte(s)));
    return fail(r, Failure::ambiguous, quoted + " matched " + std::to_string(found.size()) + " statements of " +
                                           d.qualified + " (" + match_lines(cx.src, found) + "), expected 1");
  }
  TSNode s = found.front();
  r.line = line_of(cx.src, ts_node_start_byte(s));
  if (!owns_lines(cx.src, s))
    return fail(r, Failure::invalid, quoted + " shares line " + std::to_string(r.line) + " of " + d.qualified +
                                         " with another statement: new lines cannot go " +
                                         (before ? "before" : "after") + " it alone");
  std::string code = places.front().second;
  size_t at = before ? text::line_begin(cx.src, ts_node_start_byte(s)) : text::line_after(cx.src, ts_node_end_byte(s));
  if (!before && at == cx.src.size() && !cx.src.empty() && cx.src.back() != '\n') code = cx.style.eol + code;
  out.splices.push_back({at, at, code});
  return true;
}

bool insert_before(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out, EditResult& r) {
  return insert_at_anchor(cx, d, e, true, out, r);
}

}  // namespace sitepatch::python
