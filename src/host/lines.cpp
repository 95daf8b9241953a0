#include <map>

#include "sitepatch/host/host.hpp"

namespace sitepatch::host {

std::string lines_holding(std::string_view text, const std::vector<std::string>& needles) {
  // Search the whole text for each needle, then take each hit's line: a 1 MB RECORD
  // costs a scan per needle, not a split into 15,000 lines.
  std::map<size_t, size_t> lines;  // start -> end, so each line comes once, in file order
  for (const std::string& needle : needles) {
    if (needle.empty()) continue;
    size_t from = 0;
    while ((from = text.find(needle, from)) != std::string_view::npos) {
      size_t start = text.rfind('\n', from);
      start = start == std::string_view::npos ? 0 : start + 1;
      size_t end = text.find('\n', from);
      end = end == std::string_view::npos ? text.size() : end + 1;
      lines.emplace(start, end);
      from = end;
    }
  }
  std::string out;
  for (auto [start, end] : lines) {
    out.append(text.substr(start, end - start));
    if (out.back() != '\n') out += '\n';
  }
  return out;
}

}  // namespace sitepatch::host
