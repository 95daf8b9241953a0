// Matching called names against rule patterns (the text pre-filter is prefilter.cpp).
#include <algorithm>

#include "sitepatch/audit/rules.hpp"

namespace sitepatch::audit {

bool segment_matches(std::string_view p, std::string_view n) {
  if (p == "*" || p == n) return true;
  if (p.size() < 2 || p.front() != '{' || p.back() != '}') return false;
  p = p.substr(1, p.size() - 2);
  while (!p.empty()) {
    size_t comma = p.find(',');
    if (p.substr(0, comma) == n) return true;
    if (comma == std::string_view::npos) break;
    p.remove_prefix(comma + 1);
  }
  return false;
}

bool matches(std::string_view pattern, std::string_view name) {
  while (true) {
    size_t pd = pattern.find('.'), nd = name.find('.');
    std::string_view ps = pattern.substr(0, pd), ns = name.substr(0, nd);
    if (!segment_matches(ps, ns)) return false;
    if (pd == std::string_view::npos || nd == std::string_view::npos)
      return pd == std::string_view::npos && nd == std::string_view::npos;
    pattern.remove_prefix(pd + 1);
    name.remove_prefix(nd + 1);
  }
}

void RuleSet::add(std::vector<Rule> rules) {
  for (auto& r : rules) {
    auto same = std::find_if(rules_.begin(), rules_.end(), [&](const Rule& x) { return x.id == r.id; });
    if (same != rules_.end()) *same = std::move(r);
    else rules_.push_back(std::move(r));
  }
}

std::string_view canonical(std::string_view name) {
  // Other spellings of a builtin that are the same object: io.open is builtins.open,
  // and py2/3 compatibility modules re-export the builtins.
  for (std::string_view alias : {"builtins.", "__builtin__.", "future.builtins.", "six.moves.builtins."})
    if (name.substr(0, alias.size()) == alias && name.find('.', alias.size()) == std::string_view::npos)
      return name.substr(alias.size());
  if (name == "io.open") return "open";
  return name;
}

const Rule* RuleSet::match(std::string_view name) const {
  std::string_view alt = canonical(name);
  // Every name of every file a scan parses comes here: compare first segments before
  // matching whole patterns.
  auto head = [](std::string_view s) { return s.substr(0, s.find('.')); };
  std::string_view h = head(name), ha = head(alt);
  // A rule for the name as written wins over one for its builtin spelling: io.open is
  // the io-open rule's, though the open rule would take it too.
  const Rule* by_alias = nullptr;
  for (const auto& r : rules_) {
    std::string_view rh = head(r.match);
    if (segment_matches(rh, h) && matches(r.match, name)) return &r;
    if (!by_alias && alt != name && segment_matches(rh, ha) && matches(r.match, alt)) by_alias = &r;
  }
  return by_alias;
}

}  // namespace sitepatch::audit
