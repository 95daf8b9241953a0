// replace-body and prepend-body: both work on the body's statements after its docstring.
#include "python/plan.hpp"

namespace sitepatch::python {
namespace {

// Where a def's or class's body is, and where its statements after the docstring are.
struct Body {
  bool one_line = false;  // `def f(): return 1`
  size_t colon_end = 0;   // just after the header's `:`
  size_t block_end = 0;
  bool has_doc = false;
  size_t doc_begin = 0, doc_end = 0;
  size_t begin = 0;       // statements after the docstring start here...
  size_t end = 0;         // ...and end here (multi-line: just past the last line's ending)
  std::string indent;     // the body's indentation
};

bool is_docstring(TSNode stmt) {
  if (!ts::is(stmt, "expression_statement")) return false;
  auto kids = ts::named_children(stmt);
  return kids.size() == 1 && (ts::is(kids[0], "string") || ts::is(kids[0], "concatenated_string"));
}

bool body_of(const Context& cx, const Def& d, Body& b, EditResult& r) {
  TSNode block{};
  for (const auto& c : ts::children(d.node)) {
    if (ts::is(c.node, ":") && ts_node_is_null(block)) b.colon_end = ts_node_end_byte(c.node);
    if (c.field == "body") block = c.node;
  }
  if (ts_node_is_null(block) || ts_node_end_byte(block) == ts_node_start_byte(block))
    return fail(r, Failure::invalid, d.qualified + " has no body to edit");
  std::string_view src = cx.src;
  size_t block_begin = ts_node_start_byte(block);
  b.block_end = ts_node_end_byte(block);
  TSNode first{};
  for (TSNode s : ts::named_children(block)) {
    if (ts::is(s, "comment")) continue;
    first = s;
    break;
  }
  b.has_doc = !ts_node_is_null(first) && is_docstring(first);
  if (b.has_doc) {
    b.doc_begin = ts_node_start_byte(first);
    b.doc_end = ts_node_end_byte(first);
  }
  b.one_line = text::line_begin(src, block_begin) == text::line_begin(src, b.colon_end);
  if (b.one_line) {
    b.indent = std::string(indent_at(src, ts_node_start_byte(d.node))) + cx.style.unit;
    b.begin = block_begin;
    if (b.has_doc) {
      // The statements after `"doc";` start at the next named child.
      b.begin = b.block_end;
      for (TSNode s : ts::named_children(block))
        if (ts_node_start_byte(s) >= b.doc_end && !ts::is(s, "comment")) {
          b.begin = ts_node_start_byte(s);
          break;
        }
    }
    b.end = b.block_end;
  } else {
    b.indent = std::string(indent_at(src, block_begin));
    b.begin = b.has_doc ? text::line_after(src, b.doc_end) : text::line_after(src, b.colon_end);
    b.end = text::line_after(src, b.block_end);
  }
  return true;
}

bool need_code(const recipe::Edit& e, EditResult& r) {
  if (text::strip(e.code).empty())
    return fail(r, Failure::invalid, std::string(recipe::action_name(e.action)) + " needs `code`");
  return true;
}

// A one-line body turned into a block: the header keeps `:`, the rest moves below it.
std::string open_block(const Context& cx, const Body& b, const std::string& statements) {
  std::string s = cx.style.eol;
  if (b.has_doc) s += b.indent + std::string(cx.src.substr(b.doc_begin, b.doc_end - b.doc_begin)) + cx.style.eol;
  s += statements;
  if (s.size() >= cx.style.eol.size()) s.resize(s.size() - cx.style.eol.size());  // the line keeps its own ending
  return s;
}

}  // namespace

bool replace_body(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                  EditResult& r) {
  Body b;
  if (!need_code(e, r) || !body_of(cx, d, b, r)) return false;
  std::string code = reindent_code(e.code, b.indent, cx.style);
  // The blank lines that open the body (after a docstring, most often) stay: the code
  // has none (reindenting drops them), and a person who replaces a body keeps its layout.
  if (!b.one_line)
    while (b.begin < b.end && text::strip(cx.src.substr(b.begin, text::line_after(cx.src, b.begin) - b.begin)).empty())
      b.begin = text::line_after(cx.src, b.begin);
  std::string_view current = cx.src.substr(b.begin, b.end - b.begin);
  if (same_code(current, code, b.indent)) {
    out.already = true;
    return true;
  }
  if (b.one_line)
    out.splices.push_back({b.colon_end, b.block_end, open_block(cx, b, code)});
  else
    out.splices.push_back({b.begin, b.end, fit_end(cx.src, b.end, code, cx.style.eol)});
  return true;
}

bool prepend_body(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                  EditResult& r) {
  Body b;
  if (!need_code(e, r) || !body_of(cx, d, b, r)) return false;
  std::string code = reindent_code(e.code, b.indent, cx.style);
  std::string current = text::normalize_block(cx.src.substr(b.begin, b.end - b.begin), b.indent);
  std::string wanted = text::normalize_block(code, b.indent);
  if (current == wanted || current.compare(0, wanted.size() + 1, wanted + "\n") == 0) {
    out.already = true;
    return true;
  }
  if (b.one_line) {
    std::string rest = std::string(cx.src.substr(b.begin, b.block_end - b.begin));
    std::string stmts = code + (rest.empty() ? "" : b.indent + rest + cx.style.eol);
    out.splices.push_back({b.colon_end, b.block_end, open_block(cx, b, stmts)});
  } else {
    // Insert at the start of the line after the docstring (or the header).
    size_t at = b.begin;
    if (at == cx.src.size() && !cx.src.empty() && cx.src.back() != '\n') code = cx.style.eol + code;
    code = fit_end(cx.src, at, code, cx.style.eol);
    out.splices.push_back({at, at, code});
  }
  return true;
}

}  // namespace sitepatch::python
