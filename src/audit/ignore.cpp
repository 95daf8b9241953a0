// Ignore files, checked as strictly as rules files: an entry that does not say what
// it ignores, or why, is an error with its file:line:col, never a silent no-op.
#include "sitepatch/audit/ignore.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>
#include <tuple>

#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit {

namespace {

recipe::Mark mark_of(const YAML::Node& n) {
  YAML::Mark m = n.Mark();
  if (m.is_null() || m.line < 0) return {1, 1};
  return {m.line + 1, m.column + 1};
}

struct Problems {
  std::string path;
  std::vector<recipe::Diagnostic> list;
  void add(recipe::Mark m, std::string message) { list.push_back({path, m, std::move(message)}); }
  void raise_if_any() const {
    if (list.empty()) return;
    auto sorted = list;
    std::stable_sort(sorted.begin(), sorted.end(), [](const recipe::Diagnostic& a, const recipe::Diagnostic& b) {
      return std::tie(a.mark.line, a.mark.column) < std::tie(b.mark.line, b.mark.column);
    });
    std::vector<std::string> lines;
    for (auto& d : sorted) lines.push_back(d.str());
    throw Error("invalid ignore file\n" + util::join(lines, "\n"), Exit::usage);
  }
};

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

std::vector<IgnoreEntry> parse_ignore(std::string_view text, const std::string& path) {
  Problems problems{path, {}};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    recipe::Mark m = e.mark.is_null() ? recipe::Mark{1, 1} : recipe::Mark{e.mark.line + 1, e.mark.column + 1};
    problems.add(m, "YAML syntax error: " + e.msg);
    problems.raise_if_any();
  }
  if (!root.IsMap() || !root["ignore"]) {
    problems.add(mark_of(root), "an ignore file is a mapping with an `ignore:` list");
    problems.raise_if_any();
  }
  for (const auto& pair : root) {
    std::string k = pair.first.IsScalar() ? pair.first.Scalar() : "";
    if (k != "ignore") problems.add(mark_of(pair.first), "unknown key `" + k + "`; an ignore file has only `ignore:`");
  }
  std::vector<IgnoreEntry> out;
  YAML::Node list = root["ignore"];
  if (!list.IsSequence()) {
    problems.add(mark_of(list), "`ignore` must be a list of entries");
  } else {
    int number = 0;
    for (const auto& item : list) read_entry(item, ++number, path, out, problems);
  }
  problems.raise_if_any();
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
