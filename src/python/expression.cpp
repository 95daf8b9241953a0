// set-value takes one expression: anything else would put statements at the top level
// of a module, run at its import (`1\nos.system(...)`).
#include "python/plan.hpp"
#include "sitepatch/python/check.hpp"

namespace sitepatch::python {
namespace {

// `n`'s text, first line only, shortened, in backquotes.
std::string shown(std::string_view src, TSNode n) {
  std::string_view t = ts::text(src, n);
  t = t.substr(0, t.find('\n'));
  std::string s(t.substr(0, 60));
  if (t.size() > 60) s += "...";
  return "`" + s + "`";
}

// The first ERROR or MISSING node under `n` (which has an error), in source order.
TSNode first_error(TSNode n) {
  while (true) {
    if (ts::is(n, "ERROR") || ts_node_is_missing(n)) return n;
    TSNode next{};
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      if (ts_node_has_error(c)) {
        next = c;
        break;
      }
    }
    if (ts_node_is_null(next)) return n;
    n = next;
  }
}

bool is_statement_like(TSNode n) {
  return ts::is(n, "assignment") || ts::is(n, "augmented_assignment") || ts::is(n, "yield");
}

}  // namespace

std::optional<CodeProblem> expression_problem(std::string_view code) {
  std::string src = text::to_lf(code);
  // `eval` ignores the first line's indentation; the grammar would take it for a block.
  size_t first = src.find_first_not_of(" \t\n");
  size_t shift = 0, lb = 0;
  if (first != std::string::npos) {
    lb = text::line_begin(src, first);
    shift = first - lb;
    src.erase(lb, shift);
  }
  ts::Tree tree(src);
  TSNode root = tree.root();
  auto at = [&](TSNode n, std::string message) {
    TSPoint p = ts_node_start_point(n);
    int col = int(p.column) + 1;
    // The first code line lost its indentation above: put it back in the column.
    if (text::line_begin(src, ts_node_start_byte(n)) == lb) col += int(shift);
    return CodeProblem{int(p.row) + 1, col, std::move(message)};
  };
  std::vector<TSNode> statements;
  for (TSNode s : ts::named_children(root))
    if (!ts::is(s, "comment")) statements.push_back(s);
  if (statements.empty()) return CodeProblem{1, 1, "`set-value` needs an expression"};
  if (ts_node_has_error(root)) {
    TSNode e = first_error(root);
    return at(e, "`set-value` must be one Python expression; it does not parse at " + shown(src, e));
  }
  TSNode s = statements[0];
  if (!ts::is(s, "expression_statement"))
    return at(s, "`set-value` must be one Python expression, not a statement: " + shown(src, s));
  for (TSNode x : ts::named_children(s))
    if (is_statement_like(x))
      return at(x, "`set-value` must be one Python expression, not " +
                       std::string(ts::is(x, "yield") ? "a yield: " : "an assignment: ") + shown(src, x));
  if (statements.size() > 1)
    return at(statements[1], "`set-value` must be one Python expression; a second statement follows it: " +
                                 shown(src, statements[1]));
  return std::nullopt;
}

std::vector<recipe::Diagnostic> check_recipe(const recipe::Recipe& r) {
  std::vector<recipe::Diagnostic> out;
  for (const auto& e : r.edits) {
    if (e.action != recipe::Action::set_value || text::strip(e.code).empty()) continue;
    if (auto p = expression_problem(e.code))
      out.push_back({r.path, e.code_position(p->line, p->column), p->message});
  }
  return out;
}

}  // namespace sitepatch::python
