#pragma once
// What a scan reads before it parses: a rule can only match a name whose segments are
// written in the file (or in its module's own name), so a file is parsed only when the
// text holds every literal segment of some rule, each as a whole word; and inside it,
// only the top-level blocks that hold one of those words (or a name the file's
// imports bind to them). Reading text is tens of times cheaper than parsing it.
#include <bitset>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <string_view>
#include <vector>

#include "sitepatch/audit/rules.hpp"

namespace sitepatch::audit {

/// Where `word` occurs in `text` as a whole identifier (not inside a longer name),
/// from byte `from`; npos when it does not.
size_t find_word(std::string_view text, std::string_view word, size_t from = 0);

class Prefilter {
 public:
  explicit Prefilter(const RuleSet& rules);

  /// What the text of module `module` says about the rules.
  struct Verdict {
    bool parse = false;  // some rule can match: parse (some of) the file
    bool whole = false;  // parse every block: a rule could match a name no block spells
    std::vector<std::string> seeds;  // words of the rules that can match, written in the text
  };
  Verdict judge(std::string_view text, std::string_view module) const;

  /// The literal segments every rule needs (for tests and logs).
  std::vector<std::vector<std::string>> needs() const;

 private:
  struct Need {
    std::vector<uint16_t> words;  // indices into words_
    // A segment that is one of several (`{Lock,RLock}`): at least one of its words.
    std::vector<std::vector<uint16_t>> any_of;
    bool builtin = false;         // one segment, a builtin (`open`): it must be used, not just named
    bool any_head = false;        // `*.x`: any name can be spelled so, blocks cannot be told apart
  };
  // Which words the text holds, in one pass over its identifiers (a memmem per word per
  // file was an eighth of a scan of dist-packages once the rules had 60 words).
  std::vector<int8_t> words_in(std::string_view text) const;

  std::vector<std::string> words_;
  std::vector<Need> rules_;
  std::unordered_map<std::string_view, uint16_t> word_ids_;  // views into words_
  std::bitset<256> first_;   // first bytes of the words
  std::bitset<65> lengths_;  // their lengths (64: any longer)
};

}  // namespace sitepatch::audit
