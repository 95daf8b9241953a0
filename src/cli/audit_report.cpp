// Findings of both audit modes as one list, and the ways it is printed: the sentence
// that says how complete the answer is, SARIF, and the exit code of the CI gate.
#include "audit_report.hpp"

#include <fmt/format.h>

#include "sitepatch/util/error.hpp"

namespace sitepatch::cli {

namespace {

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

const char* sarif_level(audit::Severity s) {
  switch (s) {
    case audit::Severity::error: return "error";
    case audit::Severity::warning: return "warning";
    case audit::Severity::info: return "note";
  }
  return "warning";
}

nlohmann::json location(const std::string& file, int line, int column, const std::string& function) {
  nlohmann::json region = {{"startLine", line}};
  if (column > 0) region["startColumn"] = column;
  nlohmann::json loc = {{"physicalLocation",
                         {{"artifactLocation", {{"uri", file}, {"uriBaseId", "ROOT"}}}, {"region", region}}}};
  if (!function.empty())
    loc["logicalLocations"] = nlohmann::json::array({{{"fullyQualifiedName", function}, {"kind", "function"}}});
  return loc;
}

}  // namespace

std::vector<Reported> reported_chains(const audit::CallGraph& g, const std::vector<audit::IgnoreEntry>& ignores) {
  std::vector<Reported> out;
  for (auto& c : g.chains) {
    Reported r;
    r.rule = &c.rule;
    r.operation = c.operation;
    r.file = c.steps.back().file;
    r.line = c.steps.back().line;
    r.function = c.steps.back().name();
    r.steps = c.steps;
    std::vector<std::string> names;
    for (auto& s : c.steps) names.push_back(s.name());
    r.ignored = audit::ignored_by(ignores, c.rule.id, names, r.file, r.line);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Reported> reported_calls(const engine::ScanResult& res, const std::vector<audit::IgnoreEntry>& ignores) {
  std::vector<Reported> out;
  for (auto& f : res.files)
    for (auto& x : f.findings) {
      Reported r;
      r.rule = x.rule;
      r.operation = x.operation;
      r.file = f.rel;
      r.line = x.line;
      r.column = x.column;
      r.function = x.function.empty() ? f.module : f.module + ":" + x.function;
      r.module = f.module;
      r.written = x.written;
      r.ignored = audit::ignored_by(ignores, x.rule->id, {r.function}, r.file, r.line);
      out.push_back(std::move(r));
    }
  return out;
}

std::string walk_conclusion(const std::string& entry, const audit::CallGraph& g, size_t shown, size_t ignored,
                            bool listed) {
  size_t unfollowed = g.unresolved.size(), cut = g.beyond_depth;
  std::string gaps;
  if (unfollowed)
    gaps = plural(unfollowed, "call", "calls") + " could not be followed" + (listed ? " (listed below)" : " (-v lists them)");
  if (cut)
    gaps += (gaps.empty() ? "--depth stopped " + plural(cut, "call", "calls") + " from being followed"
                          : " and --depth stopped " + std::to_string(cut) + " more");
  std::string accepted = ignored ? " (" + std::to_string(ignored) + " more accepted by the ignore file)" : "";
  if (shown > 0) {
    std::string s = entry + " reaches " + plural(shown, "flagged operation", "flagged operations") + accepted;
    return gaps.empty() ? s : s + "; " + gaps + ", so there may be more";
  }
  std::string s = entry + ": no flagged operation found in " + plural(g.functions, "function", "functions") + " walked";
  if (ignored) s += " (" + std::to_string(ignored) + " accepted by the ignore file)";
  if (gaps.empty()) return s + "; every call on the way was resolved";
  return s + "; " + gaps + ", so this is not proof there is none";
}

std::string scan_conclusion(const engine::ScanResult& r, const ScanCounts& c) {
  std::string accepted = c.ignored ? " (" + std::to_string(c.ignored) + " more accepted by the ignore file)" : "";
  std::string broken = r.files_with_syntax_errors
                           ? "; " + plural(r.files_with_syntax_errors, "file has", "files have") +
                                 " syntax errors, whose unparsed parts were not searched"
                           : "";
  if (c.calls > 0)
    return fmt::format("{} in {}{} in {} of {} ({} parsed after the text pre-filter){}{}",
                       plural(c.calls, "flagged call", "flagged calls"), plural(c.functions, "function", "functions"),
                       c.top ? fmt::format(" and {} at module level", c.top) : "", plural(c.files, "file", "files"),
                       r.files_total, r.files_parsed, accepted, broken);
  return fmt::format(
      "no flagged call written directly in {} ({} parsed after the text pre-filter){}{}; a scan does not follow "
      "calls into other functions (audit MODULE:FUNCTION does), so this is not proof there is none",
      plural(r.files_total, "file", "files"), r.files_parsed,
      c.ignored ? " (" + std::to_string(c.ignored) + " accepted by the ignore file)" : "", broken);
}

nlohmann::json rule_json(const audit::Rule& r) {
  return {{"id", r.id}, {"match", r.match}, {"category", r.category}, {"message", r.message},
          {"severity", audit::to_string(r.severity)}};
}

nlohmann::json walk_document(const std::string& entry, const audit::CallGraph& g, const std::vector<Reported>& found,
                             const std::string& conclusion) {
  nlohmann::json chains = nlohmann::json::array(), unresolved = nlohmann::json::array(),
                 limits = nlohmann::json::array(), accepted = nlohmann::json::array();
  for (auto& f : found) {
    nlohmann::json steps = nlohmann::json::array();
    for (auto& s : f.steps)
      steps.push_back({{"function", s.name()}, {"module", s.module}, {"qualified", s.qualified}, {"file", s.file},
                       {"line", s.line}});
    nlohmann::json c = {{"operation", f.operation}, {"rule", rule_json(*f.rule)}, {"steps", steps}};
    if (f.ignored) {
      c["reason"] = f.ignored->reason;
      c["ignored_by"] = f.ignored->where();
      accepted.push_back(c);
    } else {
      chains.push_back(c);
    }
  }
  for (auto& u : g.unresolved) {
    nlohmann::json j = {{"function", u.function}, {"file", u.file}, {"line", u.line},
                        {"call", u.call},         {"why", u.why},   {"limit", u.limit}};
    if (u.limit) limits.push_back(j);
    unresolved.push_back(j);
  }
  return {{"ok", true},
          {"entry", entry},
          {"conclusion", conclusion},
          {"complete", g.unresolved.empty() && g.beyond_depth == 0},
          {"unfollowed", g.unresolved.size()},
          {"beyond_depth", g.beyond_depth},
          {"chains", chains},
          {"ignored", accepted},
          {"unresolved", unresolved},
          {"limits", limits},
          {"cycles", g.cycles},
          {"functions", g.functions},
          {"modules", g.modules}};
}

nlohmann::json scan_document(const engine::ScanResult& r, const std::vector<Reported>& found, const ScanCounts& c) {
  nlohmann::json files = nlohmann::json::array(), accepted = nlohmann::json::array();
  // `found` is in the scan's order (by file, then line): one entry per file with findings.
  for (auto& f : found) {
    bool top = f.function.find(':') == std::string::npos;
    nlohmann::json j = {{"function", top ? nlohmann::json(nullptr) : nlohmann::json(f.function)},
                        {"line", f.line},
                        {"column", f.column},
                        {"operation", f.operation},
                        {"written", f.written},
                        {"rule", rule_json(*f.rule)}};
    if (f.ignored) {
      j["file"] = f.file;
      j["reason"] = f.ignored->reason;
      j["ignored_by"] = f.ignored->where();
      accepted.push_back(j);
      continue;
    }
    if (files.empty() || files.back()["file"] != f.file)
      files.push_back({{"file", f.file}, {"module", f.module}, {"findings", nlohmann::json::array()}});
    files.back()["findings"].push_back(j);
  }
  return {{"ok", true},
          {"root", r.root},
          {"conclusion", scan_conclusion(r, c)},
          {"complete", r.files_with_syntax_errors == 0},
          {"files", files},
          {"ignored", accepted},
          {"calls", c.calls},
          {"functions", c.functions},
          {"module_level_calls", c.top},
          {"files_total", r.files_total},
          {"files_parsed", r.files_parsed},
          {"files_with_syntax_errors", r.files_with_syntax_errors},
          {"bytes_total", r.bytes_total},
          {"bytes_parsed", r.bytes_parsed}};
}

nlohmann::json sarif(const std::vector<Reported>& found, const audit::RuleSet& rules, const std::string& root_uri,
                     const std::vector<audit::Unresolved>& unfollowed) {
  nlohmann::json driver_rules = nlohmann::json::array();
  std::map<std::string, size_t> index;
  for (auto& r : rules.all()) {
    index[r.id] = driver_rules.size();
    driver_rules.push_back({{"id", r.id},
                            {"name", r.id},
                            {"shortDescription", {{"text", r.message}}},
                            {"defaultConfiguration", {{"level", sarif_level(r.severity)}}},
                            {"properties", {{"category", r.category}, {"match", r.match}}}});
  }
  nlohmann::json results = nlohmann::json::array();
  for (auto& f : found) {
    nlohmann::json res = {{"ruleId", f.rule->id},
                          {"level", sarif_level(f.rule->severity)},
                          {"message", {{"text", f.operation + ": " + f.rule->message}}},
                          {"locations", nlohmann::json::array({location(f.file, f.line, f.column, f.function)})}};
    if (auto it = index.find(f.rule->id); it != index.end()) res["ruleIndex"] = it->second;
    if (!f.steps.empty()) {
      nlohmann::json flow = nlohmann::json::array();
      for (auto& s : f.steps)
        flow.push_back({{"location", location(s.file, s.line, 0, s.name())}});
      res["codeFlows"] = nlohmann::json::array({{{"threadFlows", nlohmann::json::array({{{"locations", flow}}})}}});
    }
    if (f.ignored) {
      nlohmann::json where = {{"physicalLocation",
                               {{"artifactLocation", {{"uri", f.ignored->origin}}},
                                {"region", {{"startLine", f.ignored->origin_line}}}}}};
      nlohmann::json sup = {{"kind", "external"}, {"justification", f.ignored->reason}, {"location", where}};
      res["suppressions"] = nlohmann::json::array({sup});
    }
    results.push_back(std::move(res));
  }
  nlohmann::json notes = nlohmann::json::array();
  for (auto& u : unfollowed)
    notes.push_back({{"level", u.limit ? "warning" : "note"},
                     {"message", {{"text", u.function + ": " + u.call + " could not be followed (" + u.why + ")"}}},
                     {"locations", nlohmann::json::array({location(u.file, u.line, 0, u.function)})}});
  nlohmann::json run = {
      {"tool", {{"driver", {{"name", "sitepatch"}, {"version", SITEPATCH_VERSION}, {"rules", driver_rules}}}}},
      {"originalUriBaseIds", {{"ROOT", {{"uri", root_uri}}}}},
      {"results", results},
      {"invocations", nlohmann::json::array({{{"executionSuccessful", true}, {"toolExecutionNotifications", notes}}})}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", nlohmann::json::array({run})}};
}

int gate(const std::vector<Reported>& found, std::optional<audit::Severity> fail_on, bool strict, bool incomplete) {
  if (fail_on)
    for (auto& f : found)
      if (!f.ignored && f.rule->severity >= *fail_on) return int(Exit::not_intact);  // 3: needs attention, as verify
  if (strict && incomplete) return int(Exit::not_intact);  // 3: needs attention, as verify
  return int(Exit::ok);
}

}  // namespace sitepatch::cli
