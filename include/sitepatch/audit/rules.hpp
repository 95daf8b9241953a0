#pragma once
// Rules are data: which called names audit flags, with a category and a message.
// A rules file is YAML (`rules: [{id, match, category, message, severity}]`); the shipped
// set (recipes/rules/dynamo.yaml) is carried inside the binary. Parsing does no I/O.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::audit {

/// How much a finding matters, for --fail-on: info < warning < error.
enum class Severity { info, warning, error };

/// "info", "warning", "error".
const char* to_string(Severity s);
/// The severity a name spells, or nullopt.
std::optional<Severity> parse_severity(std::string_view s);

struct Rule {
  std::string id;
  std::string match;     // dotted pattern; `*` stands for exactly one name segment
  std::string category;  // "process", "file-io", ...
  std::string message;
  Severity severity = Severity::warning;  // `severity:` in the file; warning when left out
  std::string probe;     // a line of Python doing the operation, for rules --calibrate ("" for none)
  /// Where the rule is explained: `doc:` in its file; for the shipped set its section of
  /// docs/guide/rules.md ("docs/guide/rules.md#subprocess"); "" for none.
  std::string doc;
  std::string origin;    // the file it came from ("<builtin>" for the shipped set)
  int line = 0;          // its line there
};

class RuleSet {
 public:
  /// Adds `rules`; a later rule with an id already loaded replaces the earlier one,
  /// so a user's file can override a shipped rule.
  void add(std::vector<Rule> rules);
  const std::vector<Rule>& all() const { return rules_; }
  bool empty() const { return rules_.empty(); }

  /// The first rule whose pattern matches the dotted `name` ("subprocess.run"), or nullptr.
  const Rule* match(std::string_view name) const;

 private:
  std::vector<Rule> rules_;
};

/// `name` without a module that only re-exports builtins ("builtins.open", "io.open",
/// "future.builtins.open" -> "open"); rules match either spelling.
std::string_view canonical(std::string_view name);

/// Whether `pattern` (segments, `*` = one segment) matches `name`.
bool matches(std::string_view pattern, std::string_view name);

/// Whether one segment of a pattern matches one segment of a name: equal, `*`, or one of
/// `{a,b,c}` (pathlib.Path.{exists,stat}: the methods that touch the file system).
bool segment_matches(std::string_view pattern, std::string_view name);

/// Parses a rules file. Throws sitepatch::Error (exit 2) listing every problem as
/// "file:line:col: message".
std::vector<Rule> parse_rules(std::string_view text, const std::string& path);

/// The shipped rules (recipes/rules/dynamo.yaml, embedded at build time).
std::vector<Rule> builtin_rules();

}  // namespace sitepatch::audit
