// A scan of one file's text: pre-filter, then the blocks that can hold a flagged name.
// A block needs parsing when it writes a word of a rule the file can match, or a name
// the file's top-level imports or aliases bind (`import subprocess as sp` makes `sp`
// such a word): a name is spelled from its own block's words and the binding of its
// head. Bindings are learnt by extracting, so the set grows until no block is added,
// and each round extracts its blocks in file order (the first binding of a name wins).
#include <algorithm>

#include "audit/blocks.hpp"
#include "audit/known_types.hpp"
#include "sitepatch/util/strings.hpp"
#include "audit/resolve.hpp"
#include "python/tree.hpp"
#include "sitepatch/audit/scan.hpp"

namespace sitepatch::audit {

namespace {

// Marks the blocks in which one of `words` occurs as a whole word; returns how many
// blocks were marked anew.
size_t mark(std::string_view text, const std::vector<detail::Block>& blocks, const std::vector<std::string>& words,
            std::vector<char>& needed) {
  size_t added = 0;
  for (const std::string& w : words)
    for (size_t at = find_word(text, w); at != std::string_view::npos;) {
      auto b = std::upper_bound(blocks.begin(), blocks.end(), at,
                                [](size_t x, const detail::Block& blk) { return x < blk.begin; }) - 1;
      size_t k = size_t(b - blocks.begin());
      if (!needed[k]) ++added;
      needed[k] = 1;
      at = find_word(text, w, blocks[k].end);  // the rest of this block is read anyway
    }
  return added;
}

// Whether some rule matches `name` followed by zero or more segments: a name whose
// head is bound to it could be flagged (`sp` bound to `subprocess`, for subprocess.*).
bool leads_to_rule(std::string_view name, const RuleSet& rules) {
  if (name.empty()) return false;  // a local variable
  for (std::string_view n : {name, canonical(name)})
    for (const Rule& r : rules.all()) {
      std::string_view p = r.match, rest = n;
      bool ok = true;
      while (ok && !rest.empty()) {
        size_t pd = p.find('.'), nd = rest.find('.');
        std::string_view ps = p.substr(0, pd), ns = rest.substr(0, nd);
        ok = segment_matches(ps, ns) && (nd == std::string_view::npos || pd != std::string_view::npos);
        rest = nd == std::string_view::npos ? std::string_view() : rest.substr(nd + 1);
        p = pd == std::string_view::npos ? std::string_view() : p.substr(pd + 1);
      }
      if (ok) return true;
    }
  return false;
}

// Names the module's top level binds (imports, aliases) to something a rule can match.
std::vector<std::string> bound_names(const ModuleFacts& m, const RuleSet& rules) {
  std::vector<std::string> names;
  const Function& top = m.functions[0];
  for (auto& [name, _] : top.imports) names.push_back(name);
  for (auto& [name, _] : m.aliases) names.push_back(name);
  std::vector<std::string> out;
  for (auto& name : names) {
    bool leads = leads_to_rule(detail::spelled(m, 0, name), rules);
    for (auto& other : detail::other_spellings(m, 0, name)) leads = leads || leads_to_rule(other, rules);
    if (leads) out.push_back(name);
  }
  // A module variable holding an instance a rule names (`log = logging.getLogger()`):
  // every block using it may call one of its methods.
  for (auto& [name, all] : top.types) {
    bool leads = false;
    for (const std::string& how : util::split(all, '|')) {  // "call:A|call:B": assigned twice
      size_t colon = how.find(':');
      if (colon == std::string::npos || (how.compare(0, colon, "call") != 0 && how.compare(0, colon, "type") != 0))
        continue;
      std::string cls = detail::spelled(m, 0, how.substr(colon + 1));
      if (how[0] == 'c')
        if (std::string made = detail::external_result(cls); !made.empty()) cls = made;
      leads = leads || leads_to_rule(cls, rules);
    }
    if (leads && !util::ends_with(name, "[]")) out.push_back(name);
  }
  return out;
}

ModuleFacts whole_file(std::string_view text, const std::string& module, bool is_package, util::ByteBudget* budget) {
  util::ByteBudget::Lease lease = budget ? budget->take(text.size()) : util::ByteBudget::Lease{};
  ModuleFacts facts = extract(text, module, is_package, true);
  if (text.size() >= 64 * 1024) util::return_freed_memory();  // as extract_blocks does
  return facts;
}

}  // namespace

TextScan scan_text(std::string_view text, const std::string& module, bool is_package, const RuleSet& rules,
                   const Prefilter& filter, util::ByteBudget* budget) {
  TextScan out;
  Prefilter::Verdict v = filter.judge(text, module);
  if (!v.parse) return out;
  out.parsed = true;
  // Every parse below (each round's blocks, the whole file after a damaged one) shares
  // the bound one parse of the whole file has: a file cut into many blocks must not
  // hold the scan for that bound many times over.
  python::ts::FileBudget parse_time(text.size());
  const std::vector<detail::Block> blocks = detail::top_level_blocks(text);
  std::vector<char> needed(blocks.size(), v.whole ? 1 : 0);
  std::vector<std::string> words = v.seeds;
  if (!v.whole) mark(text, blocks, words, needed);
  ModuleFacts facts;
  while (true) {
    std::vector<detail::Block> chosen;
    for (size_t k = 0; k < blocks.size(); ++k)
      if (needed[k]) chosen.push_back(blocks[k]);
    bool damaged = false;
    facts = detail::extract_blocks(text, module, is_package, chosen, budget, damaged, true);
    out.bytes_parsed = 0;
    for (auto& b : chosen) out.bytes_parsed += b.end - b.begin;
    if (damaged) {
      // The cut may be wrong where the text is not Python: read it as before.
      facts = whole_file(text, module, is_package, budget);
      out.bytes_parsed = text.size();
      break;
    }
    std::vector<std::string> fresh;
    for (auto& name : bound_names(facts, rules))
      if (std::find(words.begin(), words.end(), name) == words.end()) fresh.push_back(name);
    if (fresh.empty() || mark(text, blocks, fresh, needed) == 0) break;
    words.insert(words.end(), fresh.begin(), fresh.end());
  }
  out.syntax_errors = facts.syntax_errors > 0;
  out.findings = scan(facts, rules);
  return out;
}

}  // namespace sitepatch::audit
