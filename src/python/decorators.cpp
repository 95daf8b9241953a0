// add-decorator and remove-decorator: decorators are matched by their expression's text.
#include "python/plan.hpp"

namespace sitepatch::python {
namespace {

struct Decorator {
  TSNode node;
  std::string expr;      // `functools.cache()`
  std::string function;  // `functools.cache` when the expression is a call, else ""
};

std::vector<Decorator> decorators_of(const Context& cx, const Def& d) {
  std::vector<Decorator> out;
  if (!ts::is(d.outer, "decorated_definition")) return out;
  for (TSNode dec : ts::named_children(d.outer)) {
    if (!ts::is(dec, "decorator")) continue;
    Decorator x{dec, {}, {}};
    for (TSNode e : ts::named_children(dec)) {
      if (ts::is(e, "comment")) continue;
      x.expr = text::to_lf(ts::text(cx.src, e));
      if (ts::is(e, "call")) x.function = text::to_lf(ts::text(cx.src, ts::field(e, "function")));
      break;
    }
    out.push_back(std::move(x));
  }
  return out;
}

// The decorator expression a recipe gives, with or without its `@`.
std::string wanted_expr(const recipe::Edit& e) {
  std::string_view s = text::strip(e.code);
  if (!s.empty() && s[0] == '@') s = text::strip(s.substr(1));
  return text::to_lf(s);
}

}  // namespace

bool add_decorator(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                   EditResult& r) {
  if (ts::is(d.node, "assignment"))
    return fail(r, Failure::invalid, d.qualified + " is a variable: add-decorator needs a function or class");
  std::string want = wanted_expr(e);
  if (want.empty()) return fail(r, Failure::invalid, "add-decorator needs `code`");
  auto present = decorators_of(cx, d);
  for (const auto& dec : present) {
    if (dec.expr == want) {
      out.already = true;
      return true;
    }
  }
  // Where it goes among the others: after an upgrade added one, the user reads which
  // side of it the new one landed on.
  if (!present.empty())
    r.message = e.innermost ? "innermost: below @" + present.back().expr + ", right above the def"
                            : "outermost: above @" + present.front().expr;
  // Outermost: above the first decorator; innermost: right above the def line.
  size_t anchor = ts_node_start_byte(e.innermost ? d.node : d.outer);
  size_t at = text::line_begin(cx.src, anchor);
  std::string code = text::reindent("@" + want, indent_at(cx.src, at), cx.style);
  out.splices.push_back({at, at, code});
  return true;
}

bool remove_decorator(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                      EditResult& r) {
  if (ts::is(d.node, "assignment"))
    return fail(r, Failure::invalid, d.qualified + " is a variable: remove-decorator needs a function or class");
  std::string want = wanted_expr(e);
  if (want.empty()) return fail(r, Failure::invalid, "remove-decorator needs `code`");
  for (const auto& dec : decorators_of(cx, d)) {
    if (dec.expr != want && dec.function != want) continue;
    size_t begin = text::line_begin(cx.src, ts_node_start_byte(dec.node));
    size_t end = text::line_after(cx.src, ts_node_end_byte(dec.node));
    out.splices.push_back({begin, end, ""});
  }
  out.already = out.splices.empty();
  return true;
}

}  // namespace sitepatch::python
