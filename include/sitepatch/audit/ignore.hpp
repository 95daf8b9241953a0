#pragma once
// An ignore file: findings a team has reviewed and accepts, since nobody can put
// comments in site-packages. YAML `ignore: [{rule, function | at, reason}]`; every
// entry needs a reason. Parsing does no I/O.
#include <string>
#include <string_view>
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
};

/// Parses an ignore file. Throws sitepatch::Error (exit 2) listing every malformed
/// entry as "file:line:col: message".
std::vector<IgnoreEntry> parse_ignore(std::string_view text, const std::string& path);

/// The entry that accepts a finding of rule `rule`: one naming any of `functions`
/// ("module:qualified": a chain's steps, or the function making a direct call), or
/// the flagged call's `file`:`line`. nullptr when none does.
const IgnoreEntry* ignored_by(const std::vector<IgnoreEntry>& entries, const std::string& rule,
                              const std::vector<std::string>& functions, const std::string& file, int line);

}  // namespace sitepatch::audit
