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
  std::string root;       // the folder `file` is relative to
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

/// What the run read, for audit::unused: a walk's functions (and their lines), a
/// scan's files (all of each).
audit::Audited audited_by(const audit::CallGraph& g);
audit::Audited audited_by(const engine::ScanResult& r);
/// The ignore entries that accepted none of `found` though the run read what they name.
std::vector<const audit::IgnoreEntry*> unused_ignores(const std::vector<Reported>& found,
                                                      const std::vector<audit::IgnoreEntry>& ignores,
                                                      const audit::Audited& audited);
/// "ignore.yaml:5: warning: ignore entry for rule `open` at rp/x.py:9 accepted no finding; ..."
std::string unused_message(const audit::IgnoreEntry& e);
/// `unused` as --json shows it.
nlohmann::json unused_json(const std::vector<const audit::IgnoreEntry*>& unused);

/// The sentence that says what a walk found and how complete the walk was: "E reaches
/// N flagged operations", or "E: no flagged operation found in F functions walked; ...,
/// so this is not proof there is none". `listed`: -v prints the unfollowed calls.
/// The calls a walk did not follow, counted: "2 calls go into modules not installed
/// (tvm_ffi) and 3 more could not be followed" + `hint` after the count of the others;
/// "" when there are none.
std::string unfollowed_text(const audit::CallGraph& g, const std::string& hint);

/// `audit --callgraph`: every function the walk saw, keyed by module:qualified, with the
/// calls it followed, the flagged operations and the calls it could not follow
/// (docs/schema/callgraph.json).
nlohmann::json callgraph_document(const std::string& entry, const audit::CallGraph& g);

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
/// "[subprocess: docs/guide/rules.md#subprocess]": the rule and where it is explained,
/// at the end of each finding's line ("[my-rule]" when it has no `doc:`).
std::string rule_tag(const audit::Rule& r);

/// The --json document of a walk: the chains (and those the ignore file accepted), the
/// calls not followed (limits of the tool apart), and how complete it is.
nlohmann::json walk_document(const std::string& entry, const audit::CallGraph& g, const std::vector<Reported>& found,
                             const std::string& conclusion, const std::vector<const audit::IgnoreEntry*>& unused);
/// The --json document of a scan.
nlohmann::json scan_document(const engine::ScanResult& r, const std::vector<Reported>& found, const ScanCounts& c,
                             const std::vector<const audit::IgnoreEntry*>& unused);

/// A folder locations are relative to, and the uriBaseId SARIF names it by.
struct SarifBase {
  std::string id;      // "ROOT" (--path), "SITE1", "SITE2", ... (site folders, in sys.path order)
  std::string folder;
};
/// SITE1..SITEn for an environment's site folders, in their order.
std::vector<SarifBase> site_bases(const std::vector<std::string>& site_dirs);

/// A SARIF 2.1.0 log of `found` (ignored ones as suppressed results), for code-scanning
/// dashboards, each location relative to the base of its own folder; the calls that
/// could not be followed and the unused ignore entries are tool notifications.
nlohmann::json sarif(const std::vector<Reported>& found, const audit::RuleSet& rules,
                     const std::vector<SarifBase>& bases, const std::vector<audit::Unresolved>& unfollowed,
                     const std::vector<const audit::IgnoreEntry*>& unused);

/// The exit code: 3 when a finding at or above `fail_on` is reported (not ignored), or
/// with `strict` when the answer is incomplete; else 0.
int gate(const std::vector<Reported>& found, std::optional<audit::Severity> fail_on, bool strict, bool incomplete);

}  // namespace sitepatch::cli
