// Only the spellings packages use for the platform (sys.platform, os.name,
// platform.system()) and TYPE_CHECKING are read; anything else is unknown, and both arms
// are read as before.
#include "audit/conditions.hpp"

#include <optional>
#include <string>
#include <vector>

#include "python/tree.hpp"

namespace sitepatch::audit::detail {

namespace {

using python::ts::field;
using python::ts::is;

std::string squeezed(std::string_view src, TSNode n) {
  std::string out;
  for (char c : python::ts::text(src, n))
    if (c != ' ' && c != '\n' && c != '\t' && c != '\\') out += c;
  return out;
}

// What the platform spelling `n` is on Linux, if it is one (or a name known to hold one).
std::optional<std::string> platform_value(std::string_view src, TSNode n, const KnownNames* names) {
  std::string s = squeezed(src, n);
  if (s == "sys.platform") return "linux";
  if (s == "os.name") return "posix";
  if (s == "platform.system()") return "Linux";
  if (names && is(n, "identifier"))
    if (const std::string* v = names->value(s)) return *v;
  return std::nullopt;
}

// A string literal, or a tuple, list or set of them.
std::optional<std::vector<std::string>> literals(std::string_view src, TSNode n) {
  if (auto one = python::ts::plain_string(src, n)) return std::vector<std::string>{*one};
  if (!is(n, "tuple") && !is(n, "list") && !is(n, "set")) return std::nullopt;
  std::vector<std::string> out;
  for (TSNode k : python::ts::named_children(n)) {
    auto v = python::ts::plain_string(src, k);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

Truth of(bool b) { return b ? Truth::yes : Truth::no; }

Truth negate(Truth t) {
  switch (t) {
    case Truth::yes: return Truth::no;
    case Truth::no: return Truth::yes;
    case Truth::type_checking: return Truth::not_type_checking;
    case Truth::not_type_checking: return Truth::type_checking;
    case Truth::unknown: break;
  }
  return Truth::unknown;
}

// `sys.platform == "win32"`, `os.name != "nt"`, `sys.platform in ("linux", "darwin")`.
Truth comparison(std::string_view src, TSNode n, const KnownNames* names) {
  if (ts_node_named_child_count(n) != 2) return Truth::unknown;
  TSNode a = ts_node_named_child(n, 0), b = ts_node_named_child(n, 1);
  std::string op(python::ts::text(src, n).substr(ts_node_end_byte(a) - ts_node_start_byte(n),
                                                 ts_node_start_byte(b) - ts_node_end_byte(a)));
  std::string o;
  for (char c : op)
    if (c != ' ' && c != '\n' && c != '\\') o += c;
  auto value = platform_value(src, a, names);
  auto against = literals(src, b);
  if (!value && (o == "==" || o == "!=")) {
    value = platform_value(src, b, names);  // "win32" == sys.platform
    against = literals(src, a);
  }
  if (!value || !against) return Truth::unknown;
  bool hit = false;
  for (const auto& s : *against) hit = hit || s == *value;
  if (o == "==") return against->size() == 1 ? of(hit) : Truth::unknown;
  if (o == "!=") return against->size() == 1 ? of(!hit) : Truth::unknown;
  if (o == "in") return of(hit);
  if (o == "notin") return of(!hit);
  return Truth::unknown;
}

// `sys.platform.startswith("win")` (or a tuple of prefixes).
Truth starts_with(std::string_view src, TSNode n, const KnownNames* names) {
  TSNode fn = field(n, "function");
  if (!is(fn, "attribute") || squeezed(src, field(fn, "attribute")) != "startswith") return Truth::unknown;
  auto value = platform_value(src, field(fn, "object"), names);
  auto args = python::ts::named_children(field(n, "arguments"));
  if (!value || args.size() != 1) return Truth::unknown;
  auto prefixes = literals(src, args[0]);
  if (!prefixes) return Truth::unknown;
  bool hit = false;
  for (const auto& p : *prefixes) hit = hit || value->compare(0, p.size(), p) == 0;
  return of(hit);
}

Truth both(Truth a, Truth b, bool conjunction) {
  if (conjunction) {
    if (a == Truth::no || b == Truth::no) return Truth::no;
    if (a == Truth::yes && b == Truth::yes) return Truth::yes;
  } else {
    if (a == Truth::yes || b == Truth::yes) return Truth::yes;
    if (a == Truth::no && b == Truth::no) return Truth::no;
  }
  return Truth::unknown;
}

}  // namespace

const Truth* KnownNames::truth(const std::string& name) const {
  if (auto it = truths.find(name); it != truths.end()) return &it->second;
  return outer && !spoiled.count(name) && !values.count(name) ? outer->truth(name) : nullptr;
}

const std::string* KnownNames::value(const std::string& name) const {
  if (auto it = values.find(name); it != values.end()) return &it->second;
  return outer && !spoiled.count(name) && !truths.count(name) ? outer->value(name) : nullptr;
}

namespace {

// Conditions nested deeper than this are unknown: the recursion below stays shallow
// however deep a text nests `not (a and (...))` (packages nest a few levels).
constexpr int kDeepestCondition = 64;

Truth truth_at(std::string_view src, TSNode c, const KnownNames* names, int depth) {
  // Parentheses and `not` in a loop: `not not ... x` nests as deep as it is long.
  bool negated = false;
  while (true) {
    if (is(c, "parenthesized_expression") && ts_node_named_child_count(c) == 1) c = ts_node_named_child(c, 0);
    else if (is(c, "not_operator")) {
      negated = !negated;
      c = field(c, "argument");
    } else break;
  }
  auto result = [&](Truth t) { return negated ? negate(t) : t; };
  if (ts_node_is_null(c) || depth > kDeepestCondition) return Truth::unknown;
  if (is(c, "identifier") || is(c, "attribute")) {
    std::string s = squeezed(src, c);
    if (s == "TYPE_CHECKING" || (s.size() > 14 && s.compare(s.size() - 14, 14, ".TYPE_CHECKING") == 0))
      return result(Truth::type_checking);
    if (names && is(c, "identifier"))
      if (const Truth* t = names->truth(s)) return result(*t);
    return Truth::unknown;
  }
  if (is(c, "comparison_operator")) return result(comparison(src, c, names));
  if (is(c, "call")) return result(starts_with(src, c, names));
  if (is(c, "boolean_operator")) {
    std::string op(python::ts::text(src, field(c, "operator")));
    Truth a = truth_at(src, field(c, "left"), names, depth + 1), b = truth_at(src, field(c, "right"), names, depth + 1);
    if (op == "and" || op == "or") return result(both(a, b, op == "and"));
  }
  return Truth::unknown;
}

}  // namespace

Truth static_truth(std::string_view src, TSNode c, const KnownNames* names) {
  return truth_at(src, c, names, 0);
}

void learn(std::string_view src, const std::string& name, TSNode value, const KnownNames* known,
           KnownNames& into) {
  if (into.spoiled.count(name)) return;
  Truth t = static_truth(src, value, known);
  auto v = platform_value(src, value, known);
  bool truth = t == Truth::yes || t == Truth::no;
  auto was_truth = into.truths.find(name);
  auto was_value = into.values.find(name);
  bool first = was_truth == into.truths.end() && was_value == into.values.end();
  bool same = (truth && was_truth != into.truths.end() && was_truth->second == t) ||
              (v && was_value != into.values.end() && was_value->second == *v);
  if ((truth || v) && first) {
    if (truth) into.truths[name] = t;
    else into.values[name] = *v;
    return;
  }
  if ((truth || v) && same) return;
  // Given something else too (or two different things): nothing is known of it.
  if (was_truth != into.truths.end()) into.truths.erase(was_truth);
  if (was_value != into.values.end()) into.values.erase(was_value);
  into.spoiled.insert(name);
}

}  // namespace sitepatch::audit::detail
