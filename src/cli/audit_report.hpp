#pragma once
// What audit reports, whichever mode found it: one list of findings (a chain's last
// call, or a direct call), which the ignore file filters, --fail-on gates, and text,
// JSON and SARIF print. Private to src/cli.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sitepatch/audit/graph.hpp"
#include "sitepatch/audit/ignore.hpp"
#include "sitepatch/engine/audit.hpp"

namespace sitepatch::cli {

struct Reported {
  const audit::Rule* rule = nullptr;
  std::string operation;  // "subprocess.run"
  std::string file;       // of the flagged call, as printed
  int line = 0;
  int column = 0;         // 0 when not known (a chain's step)
  std::string function;   // "module:qualified" making the call; "module" at module level
  std::vector<audit::Step> steps;  // a walk's chain, the entry first; empty for a scan
  std::string module;              // a scan's: the file's module, and the call as written
  std::string written;
  const audit::IgnoreEntry* ignored = nullptr;
};

/// The chains of a walk (in their order), each checked against `ignores`.
std::vector<Reported> reported_chains(const audit::CallGraph& g, const std::vector<audit::IgnoreEntry>& ignores);
/// The direct calls a scan found (by file, then line), each checked against `ignores`.
std::vector<Reported> reported_calls(const engine::ScanResult& r, const std::vector<audit::IgnoreEntry>& ignores);

/// The sentence that says what a walk found and how complete the walk was: "E reaches
/// N flagged operations", or "E: no flagged operation found in F functions walked; ...,
/// so this is not proof there is none". `listed`: -v prints the unfollowed calls.
std::string walk_conclusion(const std::string& entry, const audit::CallGraph& g, size_t shown, size_t ignored,
                            bool listed);
/// What a scan reports (ignored calls left out).
struct ScanCounts {
  size_t calls = 0, functions = 0, top = 0;  // top: calls at module level
  size_t files = 0;                          // files with a reported call
  size_t ignored = 0;
};
/// The summary line of a scan; with no call reported, worded so that it never reads
/// as "there is none".
std::string scan_conclusion(const engine::ScanResult& r, const ScanCounts& c);

/// A rule as JSON output shows it.
nlohmann::json rule_json(const audit::Rule& r);

/// The --json document of a walk: the chains (and those the ignore file accepted), the
/// calls not followed (limits of the tool apart), and how complete it is.
nlohmann::json walk_document(const std::string& entry, const audit::CallGraph& g, const std::vector<Reported>& found,
                             const std::string& conclusion);
/// The --json document of a scan.
nlohmann::json scan_document(const engine::ScanResult& r, const std::vector<Reported>& found, const ScanCounts& c);

/// A SARIF 2.1.0 log of `found` (ignored ones as suppressed results), for code-scanning
/// dashboards; `notes` are the calls that could not be followed ("file:line: text").
nlohmann::json sarif(const std::vector<Reported>& found, const audit::RuleSet& rules, const std::string& root_uri,
                     const std::vector<audit::Unresolved>& unfollowed);

/// The exit code: 3 when a finding at or above `fail_on` is reported (not ignored), or
/// with `strict` when the answer is incomplete; else 0.
int gate(const std::vector<Reported>& found, std::optional<audit::Severity> fail_on, bool strict, bool incomplete);

}  // namespace sitepatch::cli
