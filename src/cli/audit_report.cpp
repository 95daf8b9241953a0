// Findings of both audit modes as one list, and the ways it is printed: the sentence
// that says how complete the answer is, SARIF, and the exit code of the CI gate.
#include "audit_report.hpp"
#include "context.hpp"

#include <limits>
#include <set>

#include <fmt/format.h>

#include "sitepatch/site/environment.hpp"

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

// The links a --path scan did not follow, a few by name (escaped: the names are the
// folder's, whoever made them).
std::string links_out_note(const std::vector<std::string>& links) {
  if (links.empty()) return "";
  std::vector<std::string> named;
  for (size_t i = 0; i < links.size() && i < 3; ++i) named.push_back(util::printable(links[i]));
  if (links.size() > 3) named.push_back("...");
  return "; " + plural(links.size(), "link", "links") + " leading out of the folder not followed (" +
         util::join(named, ", ") + ")";
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
    r.root = c.steps.back().root;
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
      r.root = f.dir;
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

audit::Audited audited_by(const audit::CallGraph& g) {
  audit::Audited a;
  for (auto& w : g.walked) {
    a.functions.insert(w.function);
    a.lines[w.file].push_back({w.line, w.end_line});
  }
  return a;
}

audit::Audited audited_by(const engine::ScanResult& r) {
  audit::Audited a;
  for (auto& rel : r.scanned) {
    a.modules.insert(site::module_for_file(rel));
    a.lines[rel].push_back({1, std::numeric_limits<int>::max()});
  }
  return a;
}

std::vector<const audit::IgnoreEntry*> unused_ignores(const std::vector<Reported>& found,
                                                      const std::vector<audit::IgnoreEntry>& ignores,
                                                      const audit::Audited& audited) {
  std::set<const audit::IgnoreEntry*> used;
  for (auto& f : found)
    if (f.ignored) used.insert(f.ignored);
  return audit::unused(ignores, used, audited);
}

std::string unused_message(const audit::IgnoreEntry& e) {
  return e.where() + ": warning: ignore entry for " + e.describe() +
         " accepted no finding; the code it was written for has changed, or it names the wrong place";
}

nlohmann::json unused_json(const std::vector<const audit::IgnoreEntry*>& unused) {
  nlohmann::json out = nlohmann::json::array();
  for (auto* e : unused) {
    nlohmann::json j = {{"ignore_file", e->origin}, {"line", e->origin_line}, {"rule", e->rule}, {"reason", e->reason}};
    if (!e->function.empty()) j["function"] = e->function;
    else j["at"] = e->file + ":" + std::to_string(e->line);
    j["message"] = unused_message(*e);
    out.push_back(std::move(j));
  }
  return out;
}

std::string unfollowed_text(const audit::CallGraph& g, const std::string& hint) {
  size_t missing = std::count_if(g.unresolved.begin(), g.unresolved.end(), [](auto& u) { return !u.missing.empty(); });
  size_t others = g.unresolved.size() - missing;
  std::string out;
  if (missing)
    out = plural(missing, "call goes", "calls go") + " into " + (g.not_installed.size() == 1 ? "a module" : "modules") +
          " not installed (" + util::join(g.not_installed, ", ") + ")";
  if (others)
    out += (missing ? " and " + std::to_string(others) + " more" : plural(others, "call", "calls")) +
           " could not be followed" + hint;
  else if (missing)
    out += hint;
  return out;
}

nlohmann::json callgraph_document(const std::string& entry, const audit::CallGraph& g) {
  nlohmann::json functions = nlohmann::json::object();
  for (auto& w : g.walked)
    functions[w.function] = {{"file", w.file},
                             {"line", w.line},
                             {"end_line", w.end_line},
                             {"calls", nlohmann::json::array()},
                             {"operations", nlohmann::json::array()},
                             {"unfollowed", nlohmann::json::array()}};
  for (auto& e : g.edges)
    if (functions.contains(e.from))
      functions[e.from]["calls"].push_back({{"function", e.to}, {"line", e.line}, {"via", or_null(e.via)}});
  for (auto& c : g.chains) {
    const audit::Step& last = c.steps.back();
    if (functions.contains(last.name()))
      functions[last.name()]["operations"].push_back(
          {{"operation", c.operation}, {"rule", c.rule.id}, {"severity", audit::to_string(c.rule.severity)}, {"line", last.line}});
  }
  for (auto& u : g.unresolved)
    if (functions.contains(u.function))
      functions[u.function]["unfollowed"].push_back(
          {{"call", u.call}, {"line", u.line}, {"why", u.why}, {"missing_module", or_null(u.missing)}});
  return {{"schema", 1},
          {"entry", entry},
          {"complete", g.unresolved.empty() && g.beyond_depth == 0},
          {"not_installed", g.not_installed},
          {"functions", functions}};
}

std::string walk_conclusion(const std::string& entry, const audit::CallGraph& g, size_t shown, size_t ignored,
                            bool listed) {
  size_t cut = g.beyond_depth;
  std::string gaps = unfollowed_text(g, listed ? " (listed below)" : " (-v lists them)");
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
  broken += links_out_note(r.links_out);
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

std::string rule_tag(const audit::Rule& r) {
  return "[" + util::printable(r.id) + (r.doc.empty() ? "" : ": " + util::printable(r.doc)) + "]";
}

nlohmann::json rule_json(const audit::Rule& r) {
  return {{"id", r.id}, {"match", r.match}, {"category", r.category}, {"message", r.message},
          {"severity", audit::to_string(r.severity)}, {"doc", or_null(r.doc)}};
}

nlohmann::json walk_document(const std::string& entry, const audit::CallGraph& g, const std::vector<Reported>& found,
                             const std::string& conclusion, const std::vector<const audit::IgnoreEntry*>& unused) {
  nlohmann::json chains = nlohmann::json::array(), unresolved = nlohmann::json::array(),
                 limits = nlohmann::json::array(), accepted = nlohmann::json::array();
  for (auto& f : found) {
    nlohmann::json steps = nlohmann::json::array();
    for (auto& s : f.steps)
      steps.push_back({{"function", s.name()}, {"module", s.module}, {"qualified", s.qualified}, {"file", s.file},
                       {"line", s.line}, {"via", or_null(s.via)}});
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
    nlohmann::json j = {{"function", u.function}, {"file", u.file}, {"line", u.line}, {"call", u.call},
                        {"why", u.why},           {"limit", u.limit}, {"missing_module", or_null(u.missing)}};
    if (u.limit) limits.push_back(j);
    unresolved.push_back(j);
  }
  nlohmann::json ruled_out = nlohmann::json::array();
  for (auto& r : g.ruled_out)
    ruled_out.push_back({{"function", r.function}, {"file", r.file}, {"line", r.line}, {"call", r.call}, {"why", r.why},
                         {"rule", r.rule.empty() ? nlohmann::json() : nlohmann::json(r.rule)}});
  return {{"ok", true},
          {"entry", entry},
          {"conclusion", conclusion},
          {"complete", g.unresolved.empty() && g.beyond_depth == 0},
          {"unfollowed", g.unresolved.size()},
          {"not_installed", g.not_installed},
          {"beyond_depth", g.beyond_depth},
          {"chains", chains},
          {"ignored", accepted},
          {"unused_ignores", unused_json(unused)},
          {"unresolved", unresolved},
          {"limits", limits},
          {"ruled_out", ruled_out},
          {"cycles", g.cycles},
          {"functions", g.functions},
          {"modules", g.modules}};
}

nlohmann::json scan_document(const engine::ScanResult& r, const std::vector<Reported>& found, const ScanCounts& c,
                             const std::vector<const audit::IgnoreEntry*>& unused) {
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
      files.push_back({{"file", f.file}, {"module", or_null(f.module)}, {"findings", nlohmann::json::array()}});
    files.back()["findings"].push_back(j);
  }
  return {{"ok", true},
          {"root", r.root},
          {"conclusion", scan_conclusion(r, c)},
          {"complete", r.files_with_syntax_errors == 0},
          {"files", files},
          {"ignored", accepted},
          {"unused_ignores", unused_json(unused)},
          {"calls", c.calls},
          {"functions", c.functions},
          {"module_level_calls", c.top},
          {"files_total", r.files_total},
          {"files_parsed", r.files_parsed},
          {"files_with_syntax_errors", r.files_with_syntax_errors},
          {"bytes_total", r.bytes_total},
          {"bytes_parsed", r.bytes_parsed}};
}

int gate(const std::vector<Reported>& found, std::optional<audit::Severity> fail_on, bool strict, bool incomplete) {
  if (fail_on)
    for (auto& f : found)
      if (!f.ignored && f.rule->severity >= *fail_on) return int(Exit::not_intact);  // 3: needs attention, as verify
  if (strict && incomplete) return int(Exit::not_intact);  // 3: needs attention, as verify
  return int(Exit::ok);
}

}  // namespace sitepatch::cli
