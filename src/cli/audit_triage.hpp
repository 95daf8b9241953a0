#pragma once
// What makes an audit report one people can triage: the rules narrowed to what is asked
// (--min-severity, --category, --rule) and the summary (--summary): a count per rule and
// per top-level package, with the worst chain of each. Private to src/cli.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit_report.hpp"
#include "context.hpp"
#include "sitepatch/audit/ignore.hpp"
#include "sitepatch/audit/rules.hpp"

namespace sitepatch::cli {

struct Triage {
  std::string min_severity;             // "", "info", "warning", "error"
  std::vector<std::string> categories;  // --category, repeatable
  std::vector<std::string> rule_ids;    // --rule, repeatable
  bool summary = false;
  bool any() const { return !min_severity.empty() || !categories.empty() || !rule_ids.empty(); }
};

/// `rules` narrowed to what `t` asks for; a --rule or --category no rule has is a usage
/// error naming the nearest. `ignores` loses the entries of rules left out (they would
/// otherwise read as accepting nothing).
audit::RuleSet triaged(const audit::RuleSet& rules, const Triage& t, std::vector<audit::IgnoreEntry>& ignores);

/// -v's calls a walk could not follow, ranked by what they may hide: calls into library
/// code whose target is unknown first, then calls into modules not installed; methods of
/// builtin types (`list.append`, `str.strip`) and compiled `torch._C` calls last, counted
/// by name rather than listed one by one.
void print_unfollowed(const Output& out, const audit::CallGraph& cg);

/// --summary: per rule and per top-level package, how many findings (not ignored) and the
/// worst of each (the highest severity; then, for chains, the shortest).
nlohmann::json summary_json(const std::vector<Reported>& found);
void print_summary(const Output& out, const std::vector<Reported>& found);

}  // namespace sitepatch::cli
