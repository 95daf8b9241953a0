// set-value: the right-hand side of a module- or class-level assignment.
#include "python/plan.hpp"
#include "sitepatch/python/check.hpp"

namespace sitepatch::python {

bool set_value(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
               EditResult& r) {
  if (!ts::is(d.node, "assignment"))
    return fail(r, Failure::invalid, d.qualified + " is a " + std::string(recipe::kind_name(d.kind)) +
                                         ": set-value needs a variable");
  if (text::strip(e.code).empty()) return fail(r, Failure::invalid, "set-value needs `code`");
  // Recipes are checked when loaded (check_recipe); this guards every other caller.
  if (auto p = expression_problem(e.code))
    return fail(r, Failure::invalid, p->message + " (line " + std::to_string(p->line) + " of the value)");
  std::string indent(indent_at(cx.src, ts_node_start_byte(d.outer)));
  // First line inline after `=`, continuation lines at the statement's indentation.
  std::string code = reindent_code(e.code, indent, cx.style);
  code = code.substr(indent.size(), code.size() - indent.size() - cx.style.eol.size());
  if (ts_node_is_null(d.value)) {  // `x: T` gets ` = value`
    size_t at = ts_node_end_byte(ts_node_is_null(d.type) ? d.node : d.type);
    out.splices.push_back({at, at, " = " + code});
    return true;
  }
  size_t begin = ts_node_start_byte(d.value), end = ts_node_end_byte(d.value);
  if (same_code(cx.src.substr(begin, end - begin), code, indent)) {
    out.already = true;
    return true;
  }
  out.splices.push_back({begin, end, code});
  return true;
}

}  // namespace sitepatch::python
