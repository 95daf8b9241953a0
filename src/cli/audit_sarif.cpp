// audit's findings as a SARIF 2.1.0 log. An environment's modules come from several
// folders (a venv's site-packages, a .pth folder, the base interpreter's), so every
// location names the folder its file is relative to as its own uriBaseId: a dashboard
// joining a uri to the wrong folder would point at a file that is not there.
#include <filesystem>

#include "audit_report.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

const char* sarif_level(audit::Severity s) {
  switch (s) {
    case audit::Severity::error: return "error";
    case audit::Severity::warning: return "warning";
    case audit::Severity::info: return "note";
  }
  return "warning";
}

// Folders compared as written by different code (the agent, --path): absolute,
// normalized, no trailing slash.
std::string normal(const std::string& folder) {
  std::string s = std::filesystem::absolute(folder).lexically_normal().string();
  while (s.size() > 1 && util::ends_with(s, "/")) s.pop_back();
  return s;
}

class Locations {
 public:
  explicit Locations(const std::vector<SarifBase>& bases) {
    for (auto& b : bases) ids_.emplace(normal(b.folder), b.id);
  }

  nlohmann::json operator()(const std::string& file, const std::string& root, int line, int column,
                            const std::string& function) const {
    nlohmann::json region = {{"startLine", line}};
    if (column > 0) region["startColumn"] = column;
    nlohmann::json artifact = {{"uri", file}};
    auto it = root.empty() ? ids_.end() : ids_.find(normal(root));
    if (it != ids_.end()) artifact["uriBaseId"] = it->second;
    else if (!root.empty()) artifact["uri"] = "file://" + normal(root) + "/" + file;  // no base names it: absolute
    nlohmann::json loc = {{"physicalLocation", {{"artifactLocation", artifact}, {"region", region}}}};
    if (!function.empty())
      loc["logicalLocations"] = nlohmann::json::array({{{"fullyQualifiedName", function}, {"kind", "function"}}});
    return loc;
  }

 private:
  std::map<std::string, std::string> ids_;  // normal folder -> id
};

nlohmann::json driver_rules(const audit::RuleSet& rules, std::map<std::string, size_t>& index) {
  nlohmann::json out = nlohmann::json::array();
  for (auto& r : rules.all()) {
    index[r.id] = out.size();
    out.push_back({{"id", r.id},
                   {"name", r.id},
                   {"shortDescription", {{"text", r.message}}},
                   {"defaultConfiguration", {{"level", sarif_level(r.severity)}}},
                   {"properties", {{"category", r.category}, {"match", r.match}}}});
  }
  return out;
}

nlohmann::json result(const Reported& f, const Locations& at, const std::map<std::string, size_t>& index) {
  nlohmann::json res = {{"ruleId", f.rule->id},
                        {"level", sarif_level(f.rule->severity)},
                        {"message", {{"text", f.operation + ": " + f.rule->message}}},
                        {"locations", nlohmann::json::array({at(f.file, f.root, f.line, f.column, f.function)})}};
  if (auto it = index.find(f.rule->id); it != index.end()) res["ruleIndex"] = it->second;
  if (!f.steps.empty()) {
    nlohmann::json flow = nlohmann::json::array();
    for (auto& s : f.steps) flow.push_back({{"location", at(s.file, s.root, s.line, 0, s.name())}});
    res["codeFlows"] = nlohmann::json::array({{{"threadFlows", nlohmann::json::array({{{"locations", flow}}})}}});
  }
  if (f.ignored) {
    nlohmann::json where = {{"physicalLocation",
                             {{"artifactLocation", {{"uri", f.ignored->origin}}},
                              {"region", {{"startLine", f.ignored->origin_line}}}}}};
    nlohmann::json sup = {{"kind", "external"}, {"justification", f.ignored->reason}, {"location", where}};
    res["suppressions"] = nlohmann::json::array({sup});
  }
  return res;
}

}  // namespace

std::vector<SarifBase> site_bases(const std::vector<std::string>& site_dirs) {
  std::vector<SarifBase> out;
  for (size_t i = 0; i < site_dirs.size(); ++i) out.push_back({"SITE" + std::to_string(i + 1), site_dirs[i]});
  return out;
}

nlohmann::json sarif(const std::vector<Reported>& found, const audit::RuleSet& rules,
                     const std::vector<SarifBase>& bases, const std::vector<audit::Unresolved>& unfollowed,
                     const std::vector<const audit::IgnoreEntry*>& unused) {
  Locations at(bases);
  std::map<std::string, size_t> index;
  nlohmann::json rules_json = driver_rules(rules, index);
  nlohmann::json results = nlohmann::json::array();
  for (auto& f : found) results.push_back(result(f, at, index));
  nlohmann::json notes = nlohmann::json::array();
  for (auto& u : unfollowed)
    notes.push_back({{"level", u.limit ? "warning" : "note"},
                     {"message", {{"text", u.function + ": " + u.call + " could not be followed (" + u.why + ")"}}},
                     {"locations", nlohmann::json::array({at(u.file, u.root, u.line, 0, u.function)})}});
  for (auto* e : unused)
    notes.push_back({{"level", "warning"},
                     {"message", {{"text", unused_message(*e)}}},
                     {"locations", nlohmann::json::array({{{"physicalLocation",
                                                            {{"artifactLocation", {{"uri", e->origin}}},
                                                             {"region", {{"startLine", e->origin_line}}}}}}})}});
  nlohmann::json base_ids = nlohmann::json::object();
  for (auto& b : bases) base_ids[b.id] = {{"uri", "file://" + normal(b.folder) + "/"}};
  nlohmann::json run = {
      {"tool", {{"driver", {{"name", "sitepatch"}, {"version", SITEPATCH_VERSION}, {"rules", rules_json}}}}},
      {"originalUriBaseIds", base_ids},
      {"results", results},
      {"invocations", nlohmann::json::array({{{"executionSuccessful", true}, {"toolExecutionNotifications", notes}}})}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", nlohmann::json::array({run})}};
}

}  // namespace sitepatch::cli
