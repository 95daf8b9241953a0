// String literals in a snippet of code: their content is data, so re-indenting the
// code must leave every byte of it alone (`"""SELECT *\nFROM t"""` keeps `FROM t`
// at column 0, or the function returns another string).
#include "python/plan.hpp"

namespace sitepatch::python {

std::vector<text::Range> string_ranges(std::string_view code) {
  if (code.find_first_of("\"'") == std::string_view::npos) return {};
  ts::Tree tree(code);
  return string_ranges(tree.root(), 0, code.size());
}

std::vector<text::Range> string_ranges(TSNode root, size_t begin, size_t end) {
  std::vector<text::Range> out;
  // A walk with a cursor, not recursion: deep expressions must not exhaust a stack.
  TSTreeCursor c = ts_tree_cursor_new(root);
  bool descend = true;
  while (true) {
    TSNode n = ts_tree_cursor_current_node(&c);
    // Only subtrees that reach into [begin, end) are walked.
    descend = descend && ts_node_end_byte(n) > begin && ts_node_start_byte(n) < end;
    if (descend && ts::is(n, "string")) {
      // Nested strings (inside an f-string's braces) lie within this one.
      out.push_back({ts_node_start_byte(n), ts_node_end_byte(n)});
      descend = false;
    }
    if (descend && ts_tree_cursor_goto_first_child(&c)) continue;
    if (ts_tree_cursor_goto_next_sibling(&c)) {
      descend = true;
      continue;
    }
    bool up = false;
    while ((up = ts_tree_cursor_goto_parent(&c)))
      if (ts_tree_cursor_goto_next_sibling(&c)) break;
    if (!up) break;
    descend = true;
  }
  ts_tree_cursor_delete(&c);
  return out;
}

std::string reindent_code(std::string_view code, std::string_view prefix, const text::Style& style) {
  std::string lf = text::to_lf(code);
  return text::reindent(lf, prefix, style, string_ranges(lf));
}

bool same_code(std::string_view current, std::string_view code, std::string_view indent) {
  if (text::normalize_block(current, indent) != text::normalize_block(code, indent)) return false;
  // Normalizing strips indentation and trailing spaces, inside literals too: their
  // content must match exactly as well.
  std::string a = text::to_lf(current), b = text::to_lf(code);
  auto ra = string_ranges(a), rb = string_ranges(b);
  if (ra.size() != rb.size()) return false;
  for (size_t i = 0; i < ra.size(); ++i)
    if (std::string_view(a).substr(ra[i].begin, ra[i].end - ra[i].begin) !=
        std::string_view(b).substr(rb[i].begin, rb[i].end - rb[i].begin))
      return false;
  return true;
}

}  // namespace sitepatch::python
