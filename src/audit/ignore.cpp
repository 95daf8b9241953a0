// Ignore files, checked as strictly as rules files: an entry that does not say what
// it ignores, or why, is an error with its file:line:col, never a silent no-op.
#include "sitepatch/audit/ignore.hpp"

#include "audit/yaml_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <tuple>

#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit {

namespace {

using detail::mark_of;
using Problems = detail::FileProblems;


void read_entry(const YAML::Node& item, int number, const std::string& path, std::vector<IgnoreEntry>& out,
                Problems& problems) {
  static const std::regex kFunction(R"([A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_.]*)");
  static const std::regex kAt(R"((.+\.py):([1-9][0-9]*))");
  static const std::vector<std::string> kKeys = {"rule", "function", "at", "reason"};
  recipe::Mark at = mark_of(item);
  std::string which = "entry " + std::to_string(number);
  if (!item.IsMap()) {
    problems.add(at, which + ": an entry is a mapping with `rule`, `function` or `at`, and `reason`");
    return;
  }
  IgnoreEntry e;
  e.origin = path;
  e.origin_line = at.line;
  for (const auto& pair : item) {
    std::string k = pair.first.IsScalar() ? pair.first.Scalar() : "";
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) {
      auto near = util::nearest(k, kKeys, 1);
      problems.add(mark_of(pair.first), which + ": unknown key `" + k + "`" +
                                            (near.empty() ? "" : "; did you mean `" + near[0] + "`?"));
      continue;
    }
    if (!pair.second.IsScalar() || util::trim(pair.second.Scalar()).empty()) {
      problems.add(pair.second.IsNull() ? mark_of(pair.first) : mark_of(pair.second), which + ": `" + k + "` must be text");
      continue;
    }
    std::string v = util::trim(pair.second.Scalar());
    std::smatch m;
    if (k == "rule") e.rule = v;
    else if (k == "reason") e.reason = v;
    else if (k == "function") {
      if (std::regex_match(v, kFunction)) e.function = v;
      else problems.add(mark_of(pair.second), which + ": `function` must be MODULE:FUNCTION, got `" + v + "`");
    } else if (std::regex_match(v, m, kAt)) {
      e.file = m[1];
      e.line = std::stoi(m[2]);
    } else {
      problems.add(mark_of(pair.second), which + ": `at` must be FILE.py:LINE, got `" + v + "`");
    }
  }
  if (!item["rule"]) problems.add(at, which + ": missing required key `rule` (the id of the rule it silences)");
  if (!item["reason"]) problems.add(at, which + ": missing required key `reason` (why this finding is accepted)");
  if (item["function"] && item["at"]) problems.add(at, which + ": give `function` or `at`, not both");
  if (!item["function"] && !item["at"])
    problems.add(at, which + ": missing `function: MODULE:FUNCTION` or `at: FILE.py:LINE`");
  out.push_back(std::move(e));
}

}  // namespace

std::vector<IgnoreEntry> parse_ignore(std::string_view text, const std::string& path,
                                      std::vector<std::string>* found) {
  Problems problems(path, "ignore");
  YAML::Node list = detail::load_list_file(text, "ignore", "an ignore file", problems);
  std::vector<IgnoreEntry> out;
  if (!list.IsSequence()) {
    problems.add(mark_of(list), "`ignore` must be a list of entries");
  } else {
    int number = 0;
    for (const auto& item : list) read_entry(item, ++number, path, out, problems);
  }
  if (!found) problems.raise_if_any();
  else for (auto& l : problems.lines()) found->push_back(std::move(l));
  return out;
}

std::string IgnoreEntry::describe() const {
  std::string what = "rule `" + rule + "`";
  if (!function.empty()) return what + " in " + function;
  return what + " at " + file + ":" + std::to_string(line);
}

std::vector<const IgnoreEntry*> unused(const std::vector<IgnoreEntry>& entries,
                                       const std::set<const IgnoreEntry*>& used, const Audited& audited) {
  std::vector<const IgnoreEntry*> out;
  for (const auto& e : entries) {
    if (used.count(&e)) continue;
    bool read = false;
    if (!e.function.empty()) {
      read = audited.functions.count(e.function) ||
             audited.modules.count(e.function.substr(0, e.function.find(':')));
    } else if (auto spans = audited.lines.find(e.file); spans != audited.lines.end()) {
      read = std::any_of(spans->second.begin(), spans->second.end(),
                         [&](const std::pair<int, int>& s) { return s.first <= e.line && e.line <= s.second; });
    }
    if (read) out.push_back(&e);
  }
  return out;
}

const IgnoreEntry* ignored_by(const std::vector<IgnoreEntry>& entries, const std::string& rule,
                              const std::vector<std::string>& functions, const std::string& file, int line) {
  for (const auto& e : entries) {
    if (e.rule != rule) continue;
    if (!e.function.empty() && std::find(functions.begin(), functions.end(), e.function) != functions.end()) return &e;
    if (!e.file.empty() && e.file == file && e.line == line) return &e;
  }
  return nullptr;
}

}  // namespace sitepatch::audit
