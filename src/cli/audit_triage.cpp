// audit's triage (audit_triage.hpp): rules narrowed before the walk or scan (so the work
// shrinks with them), and the summary a reader starts from.
#include "audit_triage.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

void known_or_usage(const std::vector<std::string>& asked, const std::vector<std::string>& known,
                    const std::string& option) {
  for (auto& a : asked)
    if (std::find(known.begin(), known.end(), a) == known.end()) {
      auto near = util::nearest(a, known, 1);
      throw Error(option + " " + a + ": no rule has it" + (near.empty() ? "" : "; did you mean `" + near[0] + "`?") +
                      " ('sitepatch rules' lists them)",
                  Exit::usage);
    }
}

// A finding's top-level package: the first part of the module that makes the call.
std::string package_of(const Reported& r) {
  std::string module = !r.steps.empty() ? r.steps.back().module : !r.module.empty() ? r.module : r.function;
  module = module.substr(0, module.find(':'));
  return module.substr(0, module.find('.'));
}

// Whether `a` is worse than `b`: a higher severity, then a shorter chain, then earlier.
bool worse(const Reported& a, const Reported& b) {
  if (a.rule->severity != b.rule->severity) return a.rule->severity > b.rule->severity;
  if (a.steps.size() != b.steps.size()) return a.steps.size() < b.steps.size();
  return false;
}

std::string describe(const Reported& r) {
  if (r.steps.empty())
    return util::printable(r.file) + ":" + std::to_string(r.line) + " " + util::printable(r.function) + " " + r.operation;
  std::vector<std::string> names;
  for (auto& s : r.steps) names.push_back(s.name());
  return util::printable(util::join(names, " -> ")) + " -> " + r.operation;
}

struct Group {
  size_t count = 0;
  const Reported* worst = nullptr;
};

std::map<std::string, Group> grouped(const std::vector<Reported>& found, bool by_rule) {
  std::map<std::string, Group> out;
  for (auto& r : found) {
    if (r.ignored) continue;
    Group& g = out[by_rule ? r.rule->id : package_of(r)];
    ++g.count;
    if (!g.worst || worse(r, *g.worst)) g.worst = &r;
  }
  return out;
}

// Most findings first, then by name.
std::vector<std::pair<std::string, Group>> ranked(const std::map<std::string, Group>& m) {
  std::vector<std::pair<std::string, Group>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second.count > b.second.count; });
  return v;
}

// Methods of the builtin types a walk cannot follow (the object's type is not known, but
// the name says what it is): hiding nothing dynamo-relevant, they go last, counted.
const std::set<std::string>& builtin_methods() {
  static const std::set<std::string> m = {
      "append", "extend", "insert", "pop", "remove", "clear", "copy", "count", "index", "sort", "reverse",
      "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "join", "format", "encode", "decode", "lower",
      "upper", "startswith", "endswith", "replace", "find", "rfind", "partition", "rpartition", "zfill", "ljust",
      "rjust", "center", "isdigit", "isalpha", "isidentifier", "title", "casefold", "expandtabs", "get", "items",
      "keys", "values", "setdefault", "update", "add", "discard", "union", "intersection", "difference",
      "issubset", "issuperset", "fromkeys", "to_bytes", "bit_length", "hex", "is_integer"};
  return m;
}

// 0: library code whose target is unknown; 1: a module not installed; 2: a builtin
// type's method; 3: a compiled torch._C call.
int rank_of(const audit::Unresolved& u) {
  if (util::starts_with(u.call, "torch._C.") || util::starts_with(u.call, "_C.") ||
      u.call.find("._C.") != std::string::npos)
    return 3;
  std::string last = u.call.substr(u.call.rfind('.') == std::string::npos ? 0 : u.call.rfind('.') + 1);
  if (u.call.find('.') != std::string::npos && builtin_methods().count(last)) return 2;
  return u.missing.empty() ? 0 : 1;
}

}  // namespace

void print_unfollowed(const Output& out, const audit::CallGraph& cg) {
  if (cg.unresolved.empty()) return;
  std::vector<const audit::Unresolved*> listed;
  std::map<std::string, size_t> builtin, compiled;
  for (auto& u : cg.unresolved) {
    int rank = rank_of(u);
    std::string last = u.call.substr(u.call.rfind('.') == std::string::npos ? 0 : u.call.rfind('.') + 1);
    if (rank == 2) ++builtin["." + last];
    else if (rank == 3) ++compiled[u.call];
    else listed.push_back(&u);
  }
  std::stable_sort(listed.begin(), listed.end(), [](auto* a, auto* b) { return rank_of(*a) < rank_of(*b); });
  out.out(plural(cg.unresolved.size(), "call", "calls") + " could not be followed" +
          (listed.size() < cg.unresolved.size() ? " (those that may hide the most first):" : ":"));
  for (auto* u : listed)
    out.out(fmt::format("    {}:{}  {}  {}  ({})", util::printable(u->file), u->line, u->function,
                        util::printable(u->call), u->why));
  auto counted = [&](const std::map<std::string, size_t>& m, const std::string& what) {
    if (m.empty()) return;
    size_t n = 0;
    std::vector<std::string> names;
    for (auto& [name, count] : m) {
      n += count;
      names.push_back(util::printable(name) + (count > 1 ? " x" + std::to_string(count) : ""));
    }
    out.out("    and " + plural(n, "call", "calls") + " " + what + ": " + util::join(names, ", "));
  };
  counted(builtin, "that look like methods of builtin types (a list's, a str's, a dict's)");
  counted(compiled, "into torch's compiled torch._C");
}

audit::RuleSet triaged(const audit::RuleSet& rules, const Triage& t, std::vector<audit::IgnoreEntry>& ignores) {
  if (!t.any()) return rules;
  std::vector<std::string> ids, categories;
  for (auto& r : rules.all()) {
    ids.push_back(r.id);
    if (std::find(categories.begin(), categories.end(), r.category) == categories.end()) categories.push_back(r.category);
  }
  known_or_usage(t.rule_ids, ids, "--rule");
  known_or_usage(t.categories, categories, "--category");
  std::optional<audit::Severity> floor;
  if (!t.min_severity.empty()) floor = audit::parse_severity(t.min_severity);
  std::vector<audit::Rule> kept;
  for (auto& r : rules.all()) {
    if (floor && r.severity < *floor) continue;
    if (!t.categories.empty() && std::find(t.categories.begin(), t.categories.end(), r.category) == t.categories.end())
      continue;
    if (!t.rule_ids.empty() && std::find(t.rule_ids.begin(), t.rule_ids.end(), r.id) == t.rule_ids.end()) continue;
    kept.push_back(r);
  }
  if (kept.empty()) throw Error("no rule is left by --min-severity, --category and --rule together", Exit::usage);
  std::vector<audit::IgnoreEntry> still;
  for (auto& e : ignores)
    if (std::any_of(kept.begin(), kept.end(), [&](auto& r) { return r.id == e.rule; })) still.push_back(e);
  ignores = std::move(still);
  audit::RuleSet out;
  out.add(std::move(kept));
  return out;
}

nlohmann::json summary_json(const std::vector<Reported>& found) {
  auto part = [&](bool by_rule) {
    nlohmann::json arr = nlohmann::json::array();
    for (auto& [name, g] : ranked(grouped(found, by_rule)))
      arr.push_back({{by_rule ? "rule" : "package", name},
                     {"count", g.count},
                     {"severity", audit::to_string(g.worst->rule->severity)},
                     {"worst", describe(*g.worst)}});
    return arr;
  };
  return {{"rules", part(true)}, {"packages", part(false)}};
}

void print_summary(const Output& out, const std::vector<Reported>& found) {
  for (bool by_rule : {true, false}) {
    auto rows = ranked(grouped(found, by_rule));
    out.out(by_rule ? "by rule:" : "by top-level package:");
    if (rows.empty()) out.out("  (nothing found)");
    size_t w = 0;
    for (auto& [name, g] : rows) w = std::max(w, name.size());
    for (auto& [name, g] : rows)
      out.out(fmt::format("  {:<{}}  {:>5}  {:<7}  worst: {}", util::printable(name), w, g.count,
                          audit::to_string(g.worst->rule->severity), describe(*g.worst)));
  }
}

}  // namespace sitepatch::cli
