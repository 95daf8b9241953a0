// Matching called names against rule patterns, and the literal pre-filter.
#include <algorithm>
#include <cstring>

#include "sitepatch/audit/rules.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit {

namespace {

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (unsigned char)c >= 0x80;
}

// `word` followed by `(` (spaces allowed), not part of a longer name nor an attribute:
// how a builtin such as open() is called.
// glibc's memmem (two-way) beats string_view::find, which stops at every occurrence of
// the first letter: the pre-filter reads every byte of every file.
size_t find(std::string_view text, std::string_view word, size_t from = 0) {
  if (from > text.size()) return std::string_view::npos;
  const void* at = ::memmem(text.data() + from, text.size() - from, word.data(), word.size());
  return at ? size_t(static_cast<const char*>(at) - text.data()) : std::string_view::npos;
}

bool has_call(std::string_view text, std::string_view word) {
  for (size_t at = find(text, word); at != std::string_view::npos; at = find(text, word, at + 1)) {
    if (at > 0 && ident_char(text[at - 1])) continue;
    // An attribute is the builtin only through a module that re-exports it (canonical()).
    if (at > 0 && text[at - 1] == '.') {
      std::string_view before = text.substr(0, at - 1);
      bool alias = false;
      for (std::string_view m : {"builtins", "__builtin__", "io"})
        alias = alias || (before.size() >= m.size() && before.substr(before.size() - m.size()) == m);
      if (!alias) continue;
    }
    size_t end = at + word.size();
    while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
    if (end < text.size() && text[end] == '(') return true;
  }
  return false;
}

}  // namespace

bool matches(std::string_view pattern, std::string_view name) {
  while (true) {
    size_t pd = pattern.find('.'), nd = name.find('.');
    std::string_view ps = pattern.substr(0, pd), ns = name.substr(0, nd);
    if (ps != "*" && ps != ns) return false;
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
  for (const auto& r : rules_) {
    std::string_view rh = head(r.match);
    bool maybe = rh == "*" || rh == h || (alt != name && rh == ha);
    if (maybe && (matches(r.match, name) || (alt != name && matches(r.match, alt)))) return &r;
  }
  return nullptr;
}

std::vector<std::string> RuleSet::literals() const {
  std::vector<std::string> out;
  for (const auto& r : rules_) {
    auto parts = util::split(r.match, '.');
    std::string lit;
    // A one-segment name is a builtin: it can only be flagged where it is called.
    if (parts.size() == 1 && parts[0] != "*") lit = parts[0] + "(";
    else if (parts.back() != "*") lit = parts.back();
    else
      for (auto& p : parts)
        if (p != "*" && p.size() > lit.size()) lit = p;
    if (lit.empty()) return {};  // `*` alone matches anything: no pre-filter
    if (std::find(out.begin(), out.end(), lit) == out.end()) out.push_back(lit);
  }
  return out;
}

bool may_match(std::string_view text, const std::vector<std::string>& literals) {
  if (literals.empty()) return true;
  for (const auto& lit : literals) {
    if (!lit.empty() && lit.back() == '(') {
      if (has_call(text, std::string_view(lit).substr(0, lit.size() - 1))) return true;
    } else if (find(text, lit) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace sitepatch::audit
