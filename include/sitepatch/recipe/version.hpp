#pragma once
// PEP 440 versions and specifiers, and PEP 503 name normalization. Pure.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::recipe {

struct Version {
  int epoch = 0;
  std::vector<long> release;
  std::optional<std::pair<char, long>> pre;  // 'a', 'b', 'c' (rc)
  std::optional<long> post;
  std::optional<long> dev;
  std::string local;
  std::string text;  // as written

  /// nullopt when `s` is not a PEP 440 version.
  static std::optional<Version> parse(std::string_view s);
  /// <0, 0, >0 by PEP 440 ordering.
  int compare(const Version& other) const;
  /// PEP 440's normal form: "1.0-1" -> "1.0.post1", "v2.0" -> "2.0", "1.0+A_B" -> "1.0+a.b".
  std::string normalized() const;
};

struct Clause {
  std::string op;  // ==, !=, <=, >=, <, >, ~=, ===
  std::string version;  // may end in .* for == and !=
};

/// Parses "==1.0,<2" (spaces allowed); nullopt with `error` set when malformed.
std::optional<std::vector<Clause>> parse_specifier(std::string_view s, std::string* error);
/// True when `v` satisfies every clause (pre-releases are not excluded).
bool satisfies(const Version& v, const std::vector<Clause>& clauses);
/// A `requires:` for a recipe made against `dist` at `version`: that version and later
/// ones up to the next minor release (`x>=0.5.3,<0.6`), whose code may have moved; the
/// next major for a one-part version; `x==version` when it is not PEP 440.
std::string up_to_next_minor(const std::string& dist, const std::string& version);
/// PEP 503: lowercase, runs of -_. become a single -.
std::string normalize_name(std::string_view name);

}  // namespace sitepatch::recipe
