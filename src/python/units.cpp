// Statement units for the merge by statement (store::merge_units): a line belongs with
// the lines of the statement (or compound header) it is part of.
#include "sitepatch/python/units.hpp"

#include <numeric>

#include "python/tree.hpp"

namespace sitepatch::python {
namespace {

/// Lines joined into one unit: each line points to the first line of its unit.
struct Joins {
  std::vector<size_t> first;
  explicit Joins(size_t lines) : first(lines) { std::iota(first.begin(), first.end(), 0); }
  void join(size_t from, size_t to) {
    if (to >= first.size()) to = first.size() - 1;
    for (size_t k = from + 1; k <= to && k < first.size(); ++k) first[k] = first[from];
  }
};

/// The last line a node covers (a node that ends at a line's start ends on the line before).
size_t last_row(TSNode n) {
  TSPoint end = ts_node_end_point(n);
  size_t row = end.row;
  if (end.column == 0 && row > ts_node_start_point(n).row) --row;
  return row;
}

/// The node's block (body), if it has one: what makes it a compound statement or clause.
TSNode block_of(TSNode n) {
  for (TSNode c : ts::named_children(n))
    if (ts::is(c, "block")) return c;
  return TSNode{};
}

void cut(TSNode n, Joins& j) {
  size_t start = ts_node_start_point(n).row;
  if (ts::is(n, "module") || ts::is(n, "block")) {
    for (TSNode c : ts::named_children(n)) cut(c, j);
    return;
  }
  if (ts::is(n, "comment")) return;  // a line of its own
  if (ts::is(n, "decorated_definition")) {
    for (TSNode c : ts::named_children(n)) cut(c, j);  // each decorator, then the definition
    return;
  }
  TSNode body = block_of(n);
  if (ts_node_is_null(body)) {
    j.join(start, last_row(n));  // a simple statement, all its lines
    return;
  }
  // A compound statement: its header up to the line its body starts on, then the body
  // and the clauses (elif, else, except, finally) each cut the same way. A body on the
  // header's line (`if x: y(...)`) goes with the header.
  size_t body_row = ts_node_start_point(body).row;
  if (body_row > start) {
    j.join(start, body_row - 1);
    cut(body, j);
  } else {
    j.join(start, last_row(body));
  }
  for (TSNode c : ts::named_children(n))
    if (!ts::is(c, "block") && !ts_node_is_null(block_of(c))) cut(c, j);
}

}  // namespace

std::vector<std::string> statement_units(std::string_view text) {
  std::vector<size_t> line_start{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' && i + 1 < text.size()) line_start.push_back(i + 1);
  if (text.empty()) return {};
  Joins j(line_start.size());
  ts::Tree tree(text);
  cut(tree.root(), j);
  std::vector<std::string> out;
  for (size_t k = 0; k < line_start.size(); ++k) {
    size_t end = k + 1 < line_start.size() ? line_start[k + 1] : text.size();
    std::string_view line = text.substr(line_start[k], end - line_start[k]);
    if (j.first[k] != k && !out.empty()) out.back() += line;
    else out.emplace_back(line);
  }
  return out;
}

}  // namespace sitepatch::python
