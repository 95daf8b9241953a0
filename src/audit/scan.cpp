// Direct flagged calls of one module, resolved through its own imports only: the
// whole-package view needs no other module, so each file is read and parsed alone.
#include "sitepatch/audit/scan.hpp"

#include <algorithm>
#include <optional>

#include "audit/resolve.hpp"

namespace sitepatch::audit {

namespace {

// SCREAMING_CASE last segment: a module constant (subprocess.PIPE, os.O_RDONLY).
bool constant_name(std::string_view name) {
  size_t dot = name.rfind('.');
  std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  bool letter = false;
  for (char c : last) {
    if (c >= 'a' && c <= 'z') return false;
    letter = letter || (c >= 'A' && c <= 'Z');
  }
  return letter && last.size() > 1;
}

// A class by Python's naming: a last segment that starts upper-case and has a lower-case
// letter (CalledProcessError, Popen; not TIMEOUT).
bool class_name(std::string_view name) {
  size_t dot = name.rfind('.');
  std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  return !last.empty() && last[0] >= 'A' && last[0] <= 'Z' &&
         std::any_of(last.begin(), last.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// An attribute of an instance of a class outside the environment read as a value
// (`if trace_log.handlers:`: logging.Logger.handlers): data, not a function handed on.
bool instance_attribute(std::string_view name) {
  size_t last = name.rfind('.');
  if (last == std::string_view::npos) return false;
  return class_name(name.substr(0, last));
}

// What the walk would flag at `ref` without following anything: the operations
// outside the environment it leads to, each branch's.
std::vector<Use> typed_uses(detail::Resolver& r, const ModuleFacts& m, int fn, const Ref& ref, const RuleSet& rules) {
  std::vector<Use> out;
  if (ref.kind == Ref::dynamic) return out;
  detail::Target t = detail::call_target(r, m, fn, ref);
  std::vector<detail::Target> all = std::move(r.also);
  r.also.clear();
  all.insert(all.begin(), t);
  for (const detail::Target& x : all) {
    if (x.kind != detail::Target::external || !performs(ref, x.name)) continue;
    const Rule* rule = rules.match(x.name);
    bool seen = std::any_of(out.begin(), out.end(), [&](const Use& u) { return u.operation == x.name; });
    if (rule && !seen) out.push_back(Use{x.name, rule});
  }
  return out;
}

}  // namespace

bool performs(const Ref& ref, std::string_view name) {
  switch (ref.kind) {
    case Ref::call: return !ref.raised;
    case Ref::entered:
    case Ref::decorator: return true;
    // A value is an operation only when it is a function handed on to be called (a
    // callback): a class used as a value (an exception given to contextlib.suppress) or
    // a constant is none.
    case Ref::value: return !ref.stored && !constant_name(name) && !class_name(name) && !instance_attribute(name);
    case Ref::dynamic: return false;
  }
  return false;
}

std::vector<Use> flagged_uses(const ModuleFacts& m, int fn, const Ref& ref, const RuleSet& rules) {
  std::vector<Use> out;
  // Spelling a name costs lookups and strings: skip the uses that cannot perform
  // whatever they name (spelling changes a name's head, never its last segment).
  if (ref.kind == Ref::dynamic || (ref.kind == Ref::value && !performs(ref, ref.name))) return out;
  std::string head = ref.name, tail;
  if (ref.on_result) {
    size_t dot = ref.name.rfind('.');
    head = ref.name.substr(0, dot);
    tail = ref.name.substr(dot);
  }
  auto check = [&](const std::string& spelled) {
    if (spelled.empty()) return;
    std::string name = spelled + tail;
    if (!performs(ref, name)) return;
    if (const Rule* rule = rules.match(name)) out.push_back(Use{std::move(name), rule});
  };
  check(detail::spelled(m, fn, head));
  for (const std::string& sp : detail::other_spellings(m, fn, head))
    if (out.empty() || out.front().operation != sp + tail) check(sp);
  return out;
}

std::vector<Finding> scan(const ModuleFacts& facts, const RuleSet& rules) {
  std::vector<Finding> out;
  // With what values hold, a use is also looked up as the walk looks it up (receiver
  // types, properties, what calls return), inside this module alone: what another
  // module defines is named as its importers spell it.
  std::optional<detail::Resolver> r;
  if (facts.typed) {
    r.emplace();
    r->closed = true;
    r->modules[facts.name] = facts;
  }
  const ModuleFacts& m = r ? *r->modules[facts.name] : facts;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    const Function& F = m.functions[i];
    for (const Ref& ref : F.refs) {
      auto uses = flagged_uses(m, int(i), ref, rules);
      if (uses.empty() && r) uses = typed_uses(*r, m, int(i), ref, rules);
      for (Use& u : uses)
        out.push_back(Finding{F.qualified, F.line, ref.line, ref.column, std::move(u.operation), ref.name, u.rule});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return out;
}

}  // namespace sitepatch::audit
