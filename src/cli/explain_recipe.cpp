// The recipe explain proposes: one edit per fix, each commented with the breaks it
// answers and what it costs, in the format `plan` and `apply` read.
#include <algorithm>
#include <cctype>
#include <set>

#include "explain_report.hpp"
#include "sitepatch/recipe/version.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// An id from the functions fixed, so two proposals for one distribution do not collide:
// `<dist>-dynamo-<first>[-<second>]`, and with more, their count and a hash of them all.
std::string recipe_id(const engine::Explanation& e, const std::string& prefix) {
  std::vector<std::string> names, all;
  for (auto& f : e.fixes) {
    all.push_back(f.module + ":" + f.function);
    std::string slug;
    for (char c : f.function.substr(f.function.rfind('.') + 1))
      slug += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(static_cast<unsigned char>(c))) : '-';
    if (std::find(names.begin(), names.end(), slug) == names.end()) names.push_back(slug);
  }
  std::string id = prefix;
  for (size_t i = 0; i < names.size() && i < 2; ++i) id += "-" + names[i];
  if (names.size() > 2)
    id += "-and-" + std::to_string(names.size() - 2) + "-more-" + util::sha256_hex(util::join(all, "\n")).substr(0, 6);
  return id;
}

}  // namespace

std::string explain_recipe(const engine::Explanation& e, const std::vector<std::string>& logs) {
  if (e.fixes.empty()) return "";
  std::set<std::pair<std::string, std::string>> dists;
  for (auto& f : e.fixes)
    if (!f.dist.empty()) dists.insert({f.dist, f.version});
  std::string id = recipe_id(e, dists.size() == 1 ? site::normalize_name(dists.begin()->first) + "-dynamo" : "dynamo");
  std::string out = "# Proposed by `sitepatch explain " + util::join(logs, " ") + "`: review before applying.\n";
  out += "# Each edit answers a graph break the log shows inside a library, or one the walk from your\n"
         "# code finds next (dynamo stopped before it); its cost is above it.\n";
  out += "id: " + id + "\n";
  out += "description: Let torch.compile through the graph breaks of " + util::join(logs, ", ") + "\n";
  if (dists.size() == 1)
    out += "# requires: the version the log was made against, up to its next minor release\n"
           "requires: " + recipe::up_to_next_minor(dists.begin()->first, dists.begin()->second) + "\n";
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
    out += engine::edit_yaml(f);
  }
  return out;
}

}  // namespace sitepatch::cli
