// The part of an edited module the environment's Python compiles (plan's second check).
#include "sitepatch/python/compile_view.hpp"

#include <algorithm>

#include "python/module_impl.hpp"
#include "python/tree.hpp"

namespace sitepatch::python {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(at, end - at));
    at = end;
  }
  return lines;
}

bool future_import(std::string_view line) {
  size_t at = line.find_first_not_of(" \t\f");
  if (at == std::string_view::npos || line.compare(at, 4, "from") != 0) return false;
  at = line.find_first_not_of(" \t\f", at + 4);
  return at != std::string_view::npos && line.compare(at, 10, "__future__") == 0;
}

bool overlaps(std::pair<size_t, size_t> a, std::pair<size_t, size_t> b) {
  return a.first <= b.second && b.first <= a.second;
}

}  // namespace

std::optional<std::vector<std::pair<size_t, size_t>>> Module::top_level_rows() const {
  const auto& impl = *impl_;
  if (!impl.codec.identity() || impl.bom != 0) return std::nullopt;
  const std::string& s = impl.source;
  for (size_t at = s.find('\r'); at != std::string::npos; at = s.find('\r', at + 1))
    if (at + 1 >= s.size() || s[at + 1] != '\n') return std::nullopt;
  std::vector<std::pair<size_t, size_t>> rows;
  for (TSNode c : ts::named_children(impl.tree->root())) {
    if (ts::is(c, "comment")) continue;
    TSPoint end = ts_node_end_point(c);
    size_t first = ts_node_start_point(c).row, last = end.row;
    if (end.column == 0 && last > first) --last;
    rows.emplace_back(first, last);
  }
  return rows;
}

std::string compile_view(std::string_view text, const std::vector<std::pair<size_t, size_t>>& statements,
                         const std::vector<std::pair<size_t, size_t>>& changed) {
  auto lines = lines_of(text);
  std::vector<char> kept(statements.size(), 0);
  for (size_t k = 0; k < statements.size(); ++k) {
    auto st = statements[k];
    kept[k] = std::any_of(changed.begin(), changed.end(), [&](auto c) { return overlaps(st, c); }) ||
              (st.first < lines.size() && future_import(lines[st.first]));
  }
  // A kept statement's lines keep every statement that shares one of them.
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t k = 0; k < statements.size(); ++k)
      if (kept[k])
        for (size_t j : {k - 1, k + 1})
          if (j < statements.size() && !kept[j] && overlaps(statements[j], statements[k])) kept[j] = grew = true;
  }
  std::vector<char> emptied(lines.size(), 0);
  for (size_t k = 0; k < statements.size(); ++k)
    if (!kept[k])
      for (size_t r = statements[k].first; r <= statements[k].second && r < lines.size(); ++r) emptied[r] = 1;
  std::string out;
  out.reserve(text.size());
  for (size_t r = 0; r < lines.size(); ++r) {
    if (!emptied[r]) {
      out += lines[r];
      continue;
    }
    // The line's end stays, so every later line keeps its number.
    if (!lines[r].empty() && lines[r].back() == '\n') out += lines[r].size() > 1 && lines[r][lines[r].size() - 2] == '\r' ? "\r\n" : "\n";
  }
  return out;
}

}  // namespace sitepatch::python
