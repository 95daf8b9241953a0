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

// A comment line from text logs, file names and packages supply: escaped, so nothing in
// it starts a line of YAML (issue 48: a log named with a line break added an edit).
std::string comment(std::string_view s) { return recipe::yaml_comment(s); }

// PEP 508's name: what a METADATA Name must be before a recipe names it.
bool valid_dist_name(std::string_view n) {
  if (n.empty() || !std::isalnum(static_cast<unsigned char>(n.front())) ||
      !std::isalnum(static_cast<unsigned char>(n.back())))
    return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
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

std::string proposed_requires(const std::string& dist, const std::string& version) {
  if (!valid_dist_name(dist) || !recipe::Version::parse(version)) return "";
  return recipe::up_to_next_minor(dist, version);
}

std::string explain_recipe(const engine::Explanation& e, const std::vector<std::string>& logs) {
  if (e.fixes.empty()) return "";
  std::set<std::pair<std::string, std::string>> dists;
  for (auto& f : e.fixes)
    if (!f.dist.empty()) dists.insert({f.dist, f.version});
  std::string requires_line = dists.size() == 1 ? proposed_requires(dists.begin()->first, dists.begin()->second) : "";
  std::string id = recipe_id(e, !requires_line.empty() ? site::normalize_name(dists.begin()->first) + "-dynamo" : "dynamo");
  std::vector<std::string> words;
  for (auto& l : logs) words.push_back(util::shell_word(l));
  std::string out = "# Proposed by " + comment("`sitepatch explain " + util::join(words, " ") + "`") +
                    ": review before applying.\n";
  out += "# Each edit answers a graph break the log shows inside a library, or one the walk from your\n"
         "# code finds next (dynamo stopped before it); its cost is above it.\n";
  out += "id: " + recipe::yaml_scalar(id) + "\n";
  std::vector<std::string> names;  // a log's name is anyone's text: the recipe holds it escaped
  for (auto& l : logs) names.push_back(util::printable(l));
  out += "description: " + recipe::yaml_scalar("Let torch.compile through the graph breaks of " + util::join(names, ", ")) +
         "\n";
  if (!requires_line.empty())
    out += "# requires: the version the log was made against, up to its next minor release\n"
           "requires: " + recipe::yaml_scalar(requires_line) + "\n";
  else if (dists.size() == 1)
    out += "# " + comment(dists.begin()->first + " " + dists.begin()->second) +
           " is no PEP 508 name and PEP 440 version: no requires: given\n";
  else
    for (auto& [d, v] : dists) out += "# touches " + comment(d + " " + v) + " (one requires: per recipe; none given)\n";
  out += "edits:\n";
  std::vector<recipe::Edit> edits;
  for (auto& f : e.fixes) {
    std::vector<std::string> which;
    for (size_t b : f.breaks) {
      const auto& br = e.breaks[b];
      which.push_back("[" + std::to_string(b + 1) + "] " +
                      (br.logged.brk.operation.empty() ? br.logged.brk.reason : br.logged.brk.operation) +
                      (br.through.empty() ? "" : " through " + br.through));
    }
    if (!which.empty())
      out += "  # answers " + comment(util::join(which, ", ") + (f.hint.empty() ? "" : " (hint " + f.hint + ")")) + "\n";
    if (!f.ahead.empty())
      out += "  # ahead of the log (the walk from your code finds it next): " + comment(util::join(f.ahead, ", ")) + "\n";
    // A cost of several lines (a hint's) reads as one; any other control is escaped.
    std::string cost = f.cost;
    std::replace(cost.begin(), cost.end(), '\n', ' ');
    out += "  # cost: " + comment(cost) + "\n";
    edits.push_back(engine::fix_edit(f));
    out += recipe::edit_yaml(edits.back());
  }
  // What is written must be what was proposed, whatever the names in it.
  recipe::check_written(out, id, edits, "the recipe explain proposes");
  return out;
}

}  // namespace sitepatch::cli
