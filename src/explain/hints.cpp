// Hints files: YAML `hints: [{id, operation, means} | {id, calls, holds, replace-body,
// ensure-import, why}]`, every problem reported with its file:line:col, as rules files are.
#include "sitepatch/explain/hints.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "audit/yaml_file.hpp"
#include "sitepatch/audit/rules.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch_hints_source.hpp"

namespace sitepatch::explain {

namespace {

using audit::detail::mark_of;
using Problems = audit::detail::FileProblems;

const std::vector<std::string> kKeys = {"id", "operation", "means", "calls", "holds",
                                        "replace-body", "ensure-import", "why"};

// One key's value into `h`; false when it is not text (or, for holds, a list of text).
bool read_value(Hint& h, const std::string& k, const YAML::Node& value) {
  if (k == "holds") {
    if (!value.IsSequence() || value.size() == 0) return false;
    for (const auto& w : value) {
      if (!w.IsScalar() || w.Scalar().empty()) return false;
      h.holds.push_back(w.Scalar());
    }
    return true;
  }
  if (!value.IsScalar() || util::trim(value.Scalar()).empty()) return false;
  std::string v = k == "replace-body" ? value.Scalar() : util::trim(value.Scalar());
  if (k == "id") h.id = v;
  else if (k == "operation") h.operation = v;
  else if (k == "means") h.means = v;
  else if (k == "calls") h.calls = v;
  else if (k == "replace-body") h.replace_body = v;
  else if (k == "ensure-import") h.ensure_import = v;
  else if (k == "why") h.why = v;
  return true;
}

void read_hint(const YAML::Node& item, int number, const std::string& path, std::set<std::string>& ids,
               std::vector<Hint>& out, Problems& problems) {
  recipe::Mark at = mark_of(item);
  std::string which = "hint " + std::to_string(number);
  if (!item.IsMap()) {
    problems.add(at, which + ": a hint is a mapping with `id` and either `operation` and `means`, or `calls` "
                             "and `replace-body`");
    return;
  }
  Hint h;
  h.origin = path;
  h.line = at.line;
  for (const auto& pair : item) {
    std::string k = pair.first.IsScalar() ? pair.first.Scalar() : "";
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) {
      auto near = util::nearest(k, kKeys, 1);
      problems.add(mark_of(pair.first),
                   which + ": unknown key `" + k + "`" + (near.empty() ? "" : "; did you mean `" + near[0] + "`?"));
      continue;
    }
    if (!read_value(h, k, pair.second))
      problems.add(pair.second.IsNull() ? mark_of(pair.first) : mark_of(pair.second),
                   which + ": `" + k + "` must be " + (k == "holds" ? "a list of words" : "text"));
    if (k == "id" && !h.id.empty() && !ids.insert(h.id).second)
      problems.add(mark_of(pair.second), which + ": id `" + h.id + "` is used by an earlier hint of this file");
  }
  if (h.id.empty() && !item["id"]) problems.add(at, which + ": missing required key `id`");
  bool says = !h.operation.empty() || !h.means.empty();
  bool fixes = !h.calls.empty() || !h.replace_body.empty() || !h.holds.empty();
  if (says && (h.operation.empty() || h.means.empty()))
    problems.add(at, which + ": `operation` and `means` go together");
  if (fixes && (h.calls.empty() || h.replace_body.empty()))
    problems.add(at, which + ": a fix needs both `calls` and `replace-body`");
  if (!says && !fixes) problems.add(at, which + ": says nothing: give `operation` and `means`, or `calls` and `replace-body`");
  out.push_back(std::move(h));
}

}  // namespace

void HintSet::add(std::vector<Hint> hints) {
  for (auto& h : hints) {
    auto same = std::find_if(hints_.begin(), hints_.end(), [&](const Hint& o) { return o.id == h.id; });
    if (same != hints_.end()) *same = std::move(h);
    else hints_.push_back(std::move(h));
  }
}

std::string HintSet::meaning(std::string_view operation) const {
  for (auto& h : hints_)
    if (!h.operation.empty() && audit::matches(h.operation, operation)) return h.means;
  return "";
}

const Hint* HintSet::fix_for(const FunctionText& f) const {
  for (auto& h : hints_) {
    if (h.calls.empty() || h.replace_body.empty()) continue;
    bool calls = std::any_of(f.calls.begin(), f.calls.end(),
                             [&](const std::string& c) { return audit::matches(h.calls, audit::canonical(c)) ||
                                                                audit::matches(h.calls, c); });
    bool holds = std::all_of(h.holds.begin(), h.holds.end(),
                             [&](const std::string& w) { return f.source.find(w) != std::string::npos; });
    bool typed = h.replace_body.find("{returns}") == std::string::npos || !f.returns.empty();
    if (calls && holds && typed) return &h;
  }
  return nullptr;
}

std::string body_for(const Hint& h, const FunctionText& f) {
  std::string out = h.replace_body;
  for (size_t at = out.find("{returns}"); at != std::string::npos; at = out.find("{returns}", at + f.returns.size()))
    out.replace(at, 9, f.returns);
  return out;
}

std::vector<Hint> parse_hints(std::string_view text, const std::string& path) {
  Problems problems(path, "hints");
  YAML::Node list = audit::detail::load_list_file(text, "hints", "a hints file", problems);
  std::vector<Hint> out;
  if (!list.IsSequence()) {
    problems.add(mark_of(list), "`hints` must be a list of hints");
  } else {
    std::set<std::string> ids;
    int number = 0;
    for (const auto& item : list) read_hint(item, ++number, path, ids, out, problems);
  }
  problems.raise_if_any();
  return out;
}

std::vector<Hint> builtin_hints() {
  static const std::vector<Hint> hints = parse_hints(embedded::hints_source, "builtin:dynamo.yaml");
  return hints;
}

}  // namespace sitepatch::explain
