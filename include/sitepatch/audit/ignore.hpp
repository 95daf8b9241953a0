#pragma once
// An ignore file: findings a team has reviewed and accepts, since nobody can put
// comments in site-packages. YAML `ignore: [{rule, function | at, reason}]`; every
// entry needs a reason. Parsing does no I/O.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sitepatch::audit {

struct IgnoreEntry {
  std::string rule;      // a rule id
  std::string function;  // `function: MODULE:FUNCTION`, or ""
  std::string file;      // `at: FILE:LINE` (the path as audit prints it), or ""
  int line = 0;
  std::string reason;
  std::string origin;    // the ignore file, and the entry's line there
  int origin_line = 0;
  std::string where() const { return origin + ":" + std::to_string(origin_line); }
  /// "rule `open` at rp/alarms.py:24", "rule `subprocess` in rp.jit.cpp_ext:ver".
  std::string describe() const;
};

/// What one audit run read, so that an entry about code it did not audit (another
/// entry point's functions, another package) is not called unused.
struct Audited {
  std::set<std::string> functions;  // "module:qualified" every call of which was read (a walk)
  std::set<std::string> modules;    // modules every function of which was read (a scan)
  std::map<std::string, std::vector<std::pair<int, int>>> lines;  // file -> line spans read
};

/// Parses an ignore file. Throws sitepatch::Error (exit 2) listing every malformed
/// entry as "file:line:col: message"; with `problems`, adds those lines to it instead
/// and returns the well-formed entries (a file YAML cannot read still throws).
std::vector<IgnoreEntry> parse_ignore(std::string_view text, const std::string& path,
                                      std::vector<std::string>* problems = nullptr);

/// The entry that accepts a finding of rule `rule`: one naming any of `functions`
/// ("module:qualified": a chain's steps, or the function making a direct call), or
/// the flagged call's `file`:`line`. nullptr when none does.
const IgnoreEntry* ignored_by(const std::vector<IgnoreEntry>& entries, const std::string& rule,
                              const std::vector<std::string>& functions, const std::string& file, int line);

/// The entries not in `used` whose function or file:line the run audited: each accepted
/// no finding, so the code it was written for has changed, or it names the wrong place.
/// In the order of `entries`.
std::vector<const IgnoreEntry*> unused(const std::vector<IgnoreEntry>& entries,
                                       const std::set<const IgnoreEntry*>& used, const Audited& audited);

}  // namespace sitepatch::audit
