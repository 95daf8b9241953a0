#include "python/plan.hpp"

namespace sitepatch::python {

std::string_view indent_at(std::string_view src, size_t off) {
  return text::leading_ws(src, text::line_begin(src, off));
}

// The unit is what the first block that starts its own line adds to its header's
// indentation. Found by a walk that stops at that block.
text::Style detect_style(TSNode root, std::string_view src) {
  text::Style style;
  style.eol = text::detect_eol(src);
  TSTreeCursor c = ts_tree_cursor_new(root);
  bool found = false;
  while (!found) {
    TSNode n = ts_tree_cursor_current_node(&c);
    if (ts::is(n, "block")) {
      TSNode parent = ts_node_parent(n);
      size_t b = ts_node_start_byte(n);
      size_t lb = text::line_begin(src, b);
      std::string_view ws = text::leading_ws(src, lb);
      std::string_view pws = indent_at(src, ts_node_start_byte(parent));
      if (lb + ws.size() == b && ws.size() > pws.size() && ws.substr(0, pws.size()) == pws) {
        style.unit = std::string(ws.substr(pws.size()));
        found = true;
        break;
      }
    }
    if (ts_tree_cursor_goto_first_child(&c)) continue;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        found = true;  // walked everything: keep the default
        break;
      }
    }
  }
  ts_tree_cursor_delete(&c);
  if (style.unit.find('\t') != std::string::npos) style.unit = "\t";
  return style;
}

std::string fit_end(std::string_view src, size_t end, std::string text, std::string_view eol) {
  if (end == src.size() && !src.empty() && src.back() != '\n' && text.size() >= eol.size() &&
      text.compare(text.size() - eol.size(), eol.size(), eol) == 0)
    text.resize(text.size() - eol.size());
  return text;
}

}  // namespace sitepatch::python
