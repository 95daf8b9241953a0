// insert-after: new definitions (a helper function, a class, an assignment) placed right
// after the target, at its indentation, separated as PEP 8 separates definitions (two
// blank lines at module level, one inside a class or function; none between assignments).
// With `anchor:` it is anchor.cpp's: new statements after one statement of a function.
#include "python/plan.hpp"

namespace sitepatch::python {

bool insert_after(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                  EditResult& r) {
  if (!e.anchor.empty()) return insert_at_anchor(cx, d, e, false, out, r);
  if (text::strip(e.code).empty()) return fail(r, Failure::invalid, "insert-after needs `code`");
  size_t begin = text::line_begin(cx.src, ts_node_start_byte(d.outer));
  size_t at = text::line_after(cx.src, ts_node_end_byte(d.outer));
  std::string indent(indent_at(cx.src, begin));
  std::string code = reindent_code(e.code, indent, cx.style);

  // Already there: the first lines after the target (blank ones skipped) are the code.
  size_t next = at;
  while (next < cx.src.size()) {
    size_t end = text::line_after(cx.src, next);
    if (!text::strip(cx.src.substr(next, end - next)).empty()) break;
    next = end;
  }
  std::string wanted = text::normalize_block(code, indent);
  std::string current = text::normalize_block(cx.src.substr(next), indent);
  if (current.compare(0, wanted.size(), wanted) == 0 &&
      (current.size() == wanted.size() || current[wanted.size()] == '\n')) {
    out.already = true;
    return true;
  }

  std::string text;
  if (at == cx.src.size() && !cx.src.empty() && cx.src.back() != '\n') text = cx.style.eol;
  // A definition gets PEP 8's blank lines; an assignment after an assignment, none.
  std::string_view first = text::strip(e.code);
  bool definition = first.rfind("def ", 0) == 0 || first.rfind("async ", 0) == 0 || first.rfind("class ", 0) == 0 ||
                    first.rfind("@", 0) == 0;
  int blank = !definition && ts::is(d.node, "assignment") ? 0 : indent.empty() ? 2 : 1;
  for (int i = 0; i < blank; ++i) text += cx.style.eol;
  text += code;
  out.splices.push_back({at, at, text});
  return true;
}

}  // namespace sitepatch::python
