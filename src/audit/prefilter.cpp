// The text pre-filter: which rules' words a file holds, before any parse.
#include "sitepatch/audit/prefilter.hpp"

#include <algorithm>
#include <cstring>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit {

namespace {

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (unsigned char)c >= 0x80;
}

// glibc's memmem (two-way) beats string_view::find, which stops at every occurrence of
// the first letter: the pre-filter reads every byte of every file.
size_t find(std::string_view text, std::string_view word, size_t from) {
  if (from > text.size()) return std::string_view::npos;
  const void* at = ::memmem(text.data() + from, text.size() - from, word.data(), word.size());
  return at ? size_t(static_cast<const char*>(at) - text.data()) : std::string_view::npos;
}

// Names the extractor makes that no file spells: `with X():` calls X().__enter__,
// `"".join()` is str.join, `[].append()` list.append, `{}.get()` dict.get.
bool made_by_extractor(std::string_view w) { return w == "__enter__" || w == "str" || w == "list" || w == "dict"; }

// Modules through which a builtin is the same object (canonical() in rules.cpp).
bool builtin_alias_before(std::string_view before) {
  for (std::string_view m : {"builtins", "__builtin__", "io"})
    if (before.size() >= m.size() && before.substr(before.size() - m.size()) == m &&
        (before.size() == m.size() || !ident_char(before[before.size() - m.size() - 1])))
      return true;
  return false;
}

// A builtin (`open`) used where a scan could flag it: called, or passed on as a value
// (`map(open, paths)`, `return open`, `@open`): the word, not an attribute of another
// module, followed by what ends an operand. Not in prose ("open the file").
bool has_use(std::string_view text, std::string_view word) {
  for (size_t at = find_word(text, word); at != std::string_view::npos; at = find_word(text, word, at + 1)) {
    if (at > 0 && text[at - 1] == '.' && !builtin_alias_before(text.substr(0, at - 1))) continue;
    size_t end = at + word.size();
    while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
    if (end == text.size() || std::strchr("(),]}:;#\\\r\n", text[end])) return true;
  }
  return false;
}

}  // namespace

size_t find_word(std::string_view text, std::string_view word, size_t from) {
  for (size_t at = find(text, word, from); at != std::string_view::npos; at = find(text, word, at + 1)) {
    size_t end = at + word.size();
    if ((at == 0 || !ident_char(text[at - 1])) && (end == text.size() || !ident_char(text[end]))) return at;
  }
  return std::string_view::npos;
}

Prefilter::Prefilter(const RuleSet& rules) {
  for (const auto& r : rules.all()) {
    Need need;
    auto parts = util::split(r.match, '.');
    need.builtin = parts.size() == 1 && parts[0] != "*";
    need.any_head = parts[0] == "*";
    auto word_index = [&](const std::string& w) {
      auto at = std::find(words_.begin(), words_.end(), w);
      if (at == words_.end()) {
        words_.push_back(w);
        return uint16_t(words_.size() - 1);
      }
      return uint16_t(at - words_.begin());
    };
    for (auto& p : parts) {
      if (p == "*") continue;  // any name: no word
      if (p.size() >= 2 && p.front() == '{' && p.back() == '}') {
        need.any_of.emplace_back();
        for (auto& w : util::split(p.substr(1, p.size() - 2), ',')) need.any_of.back().push_back(word_index(w));
        continue;
      }
      need.words.push_back(word_index(p));
    }
    rules_.push_back(std::move(need));
  }
  for (size_t k = 0; k < words_.size(); ++k) {
    word_ids_.emplace(std::string_view(words_[k]), uint16_t(k));
    if (!words_[k].empty()) first_.set((unsigned char)words_[k][0]);
    lengths_.set(std::min<size_t>(words_[k].size(), 64));
  }
}

std::vector<int8_t> Prefilter::words_in(std::string_view text) const {
  std::vector<int8_t> found(words_.size(), 0);
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    if (!ident_char(text[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < n && ident_char(text[i])) ++i;
    size_t len = i - start;
    // Most identifiers start or end unlike any word: no hash for them.
    if (!first_.test((unsigned char)text[start]) || !lengths_.test(std::min<size_t>(len, 64))) continue;
    auto it = word_ids_.find(text.substr(start, len));
    if (it != word_ids_.end()) found[it->second] = 1;
  }
  return found;
}

Prefilter::Verdict Prefilter::judge(std::string_view text, std::string_view module) const {
  enum : int8_t { unknown = -1, absent, in_text, in_name, made };
  std::vector<int8_t> where(words_.size(), unknown);
  const std::vector<int8_t> written_words = words_in(text);
  auto module_parts = util::split(std::string(module), '.');
  auto where_is = [&](uint16_t w) {
    if (where[w] != unknown) return where[w];
    const std::string& word = words_[w];
    if (std::find(module_parts.begin(), module_parts.end(), word) != module_parts.end()) where[w] = in_name;
    else if (made_by_extractor(word)) where[w] = made;
    else where[w] = written_words[w] ? in_text : absent;
    return where[w];
  };
  Verdict v;
  for (const Need& need : rules_) {
    bool can = true, written = false, named = false;
    if (need.builtin) {
      const std::string& word = words_[need.words[0]];
      can = (written_words[need.words[0]] && has_use(text, word)) ||
            (where_is(need.words[0]) == in_text &&
             (find_word(text, "builtins") != std::string_view::npos ||
              find_word(text, "__builtin__") != std::string_view::npos ||
              find_word(text, "io") != std::string_view::npos));
      written = can;
    } else {
      // The last segment first: it is the rarest (`exists` beside `os`, `path`).
      for (auto w = need.words.rbegin(); can && w != need.words.rend(); ++w) {
        int8_t at = where_is(*w);
        can = at != absent;
        written = written || at == in_text;
        named = named || at == in_name;
      }
      for (auto g = need.any_of.rbegin(); can && g != need.any_of.rend(); ++g) {
        bool some = false;
        for (uint16_t w : *g) {
          int8_t at = where_is(w);
          if (at == absent) continue;
          some = true;
          written = written || at == in_text;
          named = named || at == in_name;
        }
        can = some;
      }
    }
    if (!can) continue;
    v.parse = true;
    // A name spelled through the module's own name (its functions, relative imports),
    // or one any name can match, need not write a word of the rule in its block.
    if (need.any_head || named || !written) v.whole = true;
    for (uint16_t w : need.words)
      if (where[w] == in_text || need.builtin) v.seeds.push_back(words_[w]);
    for (auto& g : need.any_of)
      for (uint16_t w : g)
        if (where[w] == in_text) v.seeds.push_back(words_[w]);
  }
  std::sort(v.seeds.begin(), v.seeds.end());
  v.seeds.erase(std::unique(v.seeds.begin(), v.seeds.end()), v.seeds.end());
  return v;
}

std::vector<std::vector<std::string>> Prefilter::needs() const {
  std::vector<std::vector<std::string>> out;
  for (const Need& need : rules_) {
    out.emplace_back();
    for (uint16_t w : need.words) out.back().push_back(words_[w]);
  }
  return out;
}

}  // namespace sitepatch::audit
