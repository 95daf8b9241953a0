// PEP 440 version specifiers: ==, !=, <=, >=, <, >, ~=, === and ==X.* / !=X.*.
#include <array>
#include <cctype>

#include "sitepatch/recipe/version.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::recipe {

namespace {

// Longest first, so "===" is not read as "==" and "<=" not as "<".
constexpr std::array<std::string_view, 8> kOperators = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

bool is_wildcard(const Clause& c) { return util::ends_with(c.version, ".*"); }

// The version without its local label, as PEP 440 compares for everything but ==V+local.
Version public_of(Version v) {
  v.local.clear();
  return v;
}

// 1.2.3rc1 -> 1.2.3: the release (and epoch) alone.
Version base_of(const Version& v) {
  Version b;
  b.epoch = v.epoch;
  b.release = v.release;
  return b;
}

bool is_prerelease(const Version& v) { return v.pre || v.dev; }

// ==1.2.*: the candidate's release, padded with zeros, starts with the prefix.
bool prefix_match(const Version& v, const Version& prefix) {
  if (v.epoch != prefix.epoch) return false;
  for (size_t i = 0; i < prefix.release.size(); ++i) {
    long a = i < v.release.size() ? v.release[i] : 0;
    if (a != prefix.release[i]) return false;
  }
  return true;
}

bool equal(const Version& v, const Clause& c) {
  if (is_wildcard(c)) {
    auto prefix = Version::parse(c.version.substr(0, c.version.size() - 2));
    return prefix && prefix_match(v, *prefix);
  }
  auto spec = Version::parse(c.version);
  if (!spec) return false;
  // A specifier without a local label matches every local build of that version.
  return spec->local.empty() ? public_of(v).compare(*spec) == 0 : v.compare(*spec) == 0;
}

bool clause_holds(const Version& v, const Clause& c) {
  if (c.op == "===") return iequals(util::trim(v.text), c.version);
  if (c.op == "==") return equal(v, c);
  if (c.op == "!=") return !equal(v, c);

  auto spec = Version::parse(c.version);
  if (!spec) return false;
  Version pub = public_of(v);
  if (c.op == "<=") return pub.compare(*spec) <= 0;
  if (c.op == ">=") return pub.compare(*spec) >= 0;
  if (c.op == "<") {
    // <3.1 excludes 3.1's own pre-releases (3.1rc1), unless it names a pre-release itself.
    if (pub.compare(*spec) >= 0) return false;
    return is_prerelease(*spec) || !is_prerelease(pub) || base_of(pub).compare(base_of(*spec)) != 0;
  }
  if (c.op == ">") {
    // >3.1 excludes 3.1's post-releases and local builds, unless it names a post-release.
    if (pub.compare(*spec) <= 0) return false;
    if (!spec->post && pub.post && base_of(pub).compare(base_of(*spec)) == 0) return false;
    if (!v.local.empty() && base_of(pub).compare(base_of(*spec)) == 0) return false;
    return true;
  }
  if (c.op == "~=") {
    // ~=1.4.2 means >=1.4.2, ==1.4.*
    Version prefix = base_of(*spec);
    prefix.release.pop_back();
    return pub.compare(*spec) >= 0 && prefix_match(pub, prefix);
  }
  return false;
}

// Checks one clause; returns an error message or "".
std::string check(const Clause& c, const std::string& written) {
  if (c.version.empty()) return "`" + c.op + "` needs a version after it";
  if (c.op == "===") {
    if (c.version.find_first_of(" \t") != std::string::npos)
      return "`===` takes a version without spaces, not `" + written + "`";
    return "";
  }
  bool wildcard = is_wildcard(c);
  std::string text = wildcard ? c.version.substr(0, c.version.size() - 2) : c.version;
  auto v = Version::parse(text);
  if (!v) return "`" + text + "` in `" + written + "` is not a PEP 440 version";
  if (wildcard) {
    if (c.op != "==" && c.op != "!=") return "`.*` goes only with == and !=, not in `" + written + "`";
    if (v->pre || v->post || v->dev || !v->local.empty())
      return "`.*` follows release numbers only (as in ==1.2.*), not `" + written + "`";
  }
  if (!v->local.empty() && c.op != "==" && c.op != "!=")
    return "a local version (`+" + v->local + "`) goes only with == and !=, not in `" + written + "`";
  if (c.op == "~=" && v->release.size() < 2)
    return "`" + written + "` needs at least two release numbers (as in ~=1.4)";
  return "";
}

}  // namespace

std::optional<std::vector<Clause>> parse_specifier(std::string_view s, std::string* error) {
  std::vector<Clause> out;
  auto fail = [&](std::string message) -> std::optional<std::vector<Clause>> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  if (util::trim(s).empty()) return out;
  for (const auto& part : util::split(s, ',')) {
    std::string written = util::trim(part);
    if (written.empty()) return fail("empty clause in `" + util::trim(s) + "`");
    Clause c;
    for (auto op : kOperators) {
      if (util::starts_with(written, op)) {
        c.op = std::string(op);
        break;
      }
    }
    if (c.op.empty())
      return fail("`" + written + "` does not start with an operator (==, !=, <=, >=, <, >, ~=, ===)");
    c.version = util::trim(std::string_view(written).substr(c.op.size()));
    if (std::string problem = check(c, written); !problem.empty()) return fail(problem);
    out.push_back(std::move(c));
  }
  return out;
}

bool satisfies(const Version& v, const std::vector<Clause>& clauses) {
  for (const auto& c : clauses)
    if (!clause_holds(v, c)) return false;
  return true;
}

}  // namespace sitepatch::recipe
