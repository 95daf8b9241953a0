// The recipe explain proposes: one edit per fix, each commented with the breaks it
// answers and what it costs, in the format `plan` and `apply` read.
#include <set>

#include "explain_report.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

// `text` as a YAML `|` block at `indent` spaces.
std::string block(const std::string& text, const std::string& indent) {
  std::string out;
  for (auto& l : util::split(text, '\n')) out += l.empty() ? "\n" : indent + l + "\n";
  while (util::ends_with(out, "\n\n")) out.pop_back();
  return out;
}

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

std::string explain_recipe(const engine::Explanation& e, const std::vector<std::string>& logs) {
  if (e.fixes.empty()) return "";
  std::set<std::pair<std::string, std::string>> dists;
  for (auto& f : e.fixes)
    if (!f.dist.empty()) dists.insert({f.dist, f.version});
  std::string id = dists.size() == 1 ? site::normalize_name(dists.begin()->first) + "-dynamo" : "dynamo-breaks";
  std::string out = "# Proposed by `sitepatch explain " + util::join(logs, " ") + "`: review before applying.\n";
  out += "# Each edit answers a graph break the log shows inside a library, or one the walk from your\n"
         "# code finds next (dynamo stopped before it); its cost is above it.\n";
  out += "id: " + id + "\n";
  out += "description: Let torch.compile through the graph breaks of " + util::join(logs, ", ") + "\n";
  if (dists.size() == 1) out += "requires: " + dists.begin()->first + "==" + dists.begin()->second + "\n";
  else
    for (auto& [d, v] : dists) out += "# touches " + d + " " + v + " (one requires: per recipe; none given)\n";
  out += "edits:\n";
  for (auto& f : e.fixes) {
    std::vector<std::string> which;
    for (size_t b : f.breaks) {
      const auto& br = e.breaks[b];
      which.push_back("[" + std::to_string(b + 1) + "] " +
                      (br.logged.brk.operation.empty() ? br.logged.brk.reason : br.logged.brk.operation) +
                      (br.through.empty() ? "" : " through " + br.through));
    }
    if (!which.empty())
      out += "  # answers " + util::join(which, ", ") + (f.hint.empty() ? "" : " (hint " + f.hint + ")") + "\n";
    if (!f.ahead.empty())
      out += "  # ahead of the log (the walk from your code finds it next): " + util::join(f.ahead, ", ") + "\n";
    out += "  # cost: " + one_line(f.cost) + "\n";
    out += "  - module: " + f.module + "\n";
    out += "    function: " + f.function + "\n";
    if (f.action == "replace-body") out += "    replace-body: |\n" + block(f.code, "      ");
    else out += "    " + f.action + ": " + f.code + "\n";
    if (!f.ensure_import.empty()) out += "    ensure-import: " + f.ensure_import + "\n";
  }
  return out;
}

}  // namespace sitepatch::cli
