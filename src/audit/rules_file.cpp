// Rules files: YAML `rules: [{id, match, category, message, severity, probe, doc}]`, every problem reported
// with its file:line:col, as recipe errors are.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <tuple>
#include <set>

#include "audit/yaml_file.hpp"
#include "sitepatch/audit/rules.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch_rules_source.hpp"

namespace sitepatch::audit {

namespace {

using detail::mark_of;
using Problems = detail::FileProblems;


// A pattern is dotted identifiers, where a whole segment may be `*` or `{a,b,c}`.
bool valid_pattern(const std::string& p) {
  static const std::regex kSegment("[A-Za-z_][A-Za-z0-9_]*|\\*|\\{[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*\\}");
  auto parts = util::split(p, '.');
  for (auto& s : parts)
    if (!std::regex_match(s, kSegment)) return false;
  return !parts.empty();
}

void read_rule(const YAML::Node& item, int number, const std::string& path, std::set<std::string>& ids,
               std::vector<Rule>& out, Problems& problems) {
  recipe::Mark at = mark_of(item);
  std::string which = "rule " + std::to_string(number);
  if (!item.IsMap()) {
    problems.add(at, which + ": a rule is a mapping with `id`, `match`, `category`, `message`");
    return;
  }
  static const std::vector<std::string> kKeys = {"id", "match", "category", "message", "severity", "probe", "doc"};
  Rule r;
  r.origin = path;
  r.line = at.line;
  for (const auto& pair : item) {
    YAML::Node key = pair.first, value = pair.second;
    std::string k = key.IsScalar() ? key.Scalar() : "";
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) {
      auto near = util::nearest(k, kKeys, 1);
      problems.add(mark_of(key), which + ": unknown key `" + k + "`" +
                                     (near.empty() ? "" : "; did you mean `" + near[0] + "`?"));
      continue;
    }
    if (!value.IsScalar() || util::trim(value.Scalar()).empty()) {
      problems.add(value.IsNull() ? mark_of(key) : mark_of(value), which + ": `" + k + "` must be text");
      continue;
    }
    std::string v = util::trim(value.Scalar());
    if (k == "id") r.id = v;
    else if (k == "match") r.match = v;
    else if (k == "category") r.category = v;
    else if (k == "message") r.message = v;
    else if (k == "probe") r.probe = v;
    else if (k == "doc") r.doc = v;
    else if (auto sev = parse_severity(v)) r.severity = *sev;
    else problems.add(mark_of(value), which + ": `severity` must be error, warning or info, got `" + v + "`");
    if (k == "match" && !valid_pattern(v))
      problems.add(mark_of(value), which + ": `match` must be a dotted name whose segments are "
                                           "names, `*` or `{a,b,...}` (one of those names), got `" + v + "`");
    if (k == "id" && !ids.insert(v).second)
      problems.add(mark_of(value), which + ": id `" + v + "` is used by an earlier rule of this file");
  }
  for (const char* k : {"id", "match", "category", "message"}) {
    bool have = (std::string(k) == "id" && !r.id.empty()) || (std::string(k) == "match" && !r.match.empty()) ||
                (std::string(k) == "category" && !r.category.empty()) ||
                (std::string(k) == "message" && !r.message.empty());
    if (!have && !item[k]) problems.add(at, which + ": missing required key `" + k + "`");
  }
  out.push_back(std::move(r));
}

}  // namespace

const char* to_string(Severity s) {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "warning";
}

std::optional<Severity> parse_severity(std::string_view s) {
  for (Severity v : {Severity::info, Severity::warning, Severity::error})
    if (s == to_string(v)) return v;
  return std::nullopt;
}

std::vector<Rule> parse_rules(std::string_view text, const std::string& path) {
  Problems problems(path, "rules");
  YAML::Node list = detail::load_list_file(text, "rules", "a rules file", problems);
  std::vector<Rule> out;
  if (!list.IsSequence()) {
    problems.add(mark_of(list), "`rules` must be a list of rules");
  } else {
    std::set<std::string> ids;
    int number = 0;
    for (const auto& item : list) read_rule(item, ++number, path, ids, out, problems);
  }
  problems.raise_if_any();
  return out;
}

std::vector<Rule> builtin_rules() {
  static const std::vector<Rule> rules = [] {
    auto r = parse_rules(embedded::rules_source, "builtin:dynamo.yaml");
    // Each shipped rule has its section in the rules guide (tests/docs/rules_doc.py holds
    // the guide to the rules file); its heading is the id, so the anchor is too.
    for (auto& rule : r)
      if (rule.doc.empty()) rule.doc = "docs/guide/rules.md#" + rule.id;
    return r;
  }();
  return rules;
}

}  // namespace sitepatch::audit
