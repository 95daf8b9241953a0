#pragma once
// Private to src/python: where a replace's `old` and `new` stand in a file. Both are
// blocks: line 1 stands where the match begins, and each later line is indented
// relative to it (the indentation before the match is put in front of it), so text
// written at column 0, as a YAML `|` block gives it, fits a method body. A match
// begins and ends where the module's tokens do: `= 1` is not found inside `= 10`.
#include <tree_sitter/api.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "python/text.hpp"

namespace sitepatch::python::detail {

/// A replace's `old` or `new` (LF line endings) and how its lines are placed.
class Block {
 public:
  /// `absolute`: lines 2+ stand at the column they are written at (how recipes recorded
  /// before history record format 3 were read), whatever the match's indentation.
  Block(std::string_view text, bool absolute);

  /// The bytes the block stands for where a match begins after `base` on its line:
  /// `base` in front of each later line that is not empty and does not begin inside a
  /// string literal (a literal's content is data).
  std::string placed(std::string_view base) const;

  /// The block that `placed` (found after `base`) stands for: `base` taken off the
  /// lines placing puts it on; nullopt when one of them does not begin with it.
  static std::optional<std::string> unplaced(std::string_view placed, std::string_view base);

  const std::string& text() const { return text_; }
  /// Whether its placement depends on where it is found.
  bool moves() const { return !absolute_ && prefixed_ > 0; }

 private:
  std::string text_;
  std::vector<size_t> starts_;  // the later lines that take the base: their offsets in text_
  size_t prefixed_ = 0;
  bool absolute_ = false;
};

/// One place a block was found: bytes [at, at + size) of the text searched.
struct Match {
  size_t at = 0, size = 0;
};

/// The indentation line 1 of a block found at `at` counts from: the whitespace before
/// `at` on its line, up to the line's first other character.
std::string_view base_at(std::string_view hay, size_t at);

/// Where `b` stands in `hay` (LF line endings), left to right, not overlapping; no
/// token check (the text alone: what capture counts with).
std::vector<Match> block_matches(std::string_view hay, const Block& b);

/// The token of the module that byte offset `off` of `src` falls strictly inside (a
/// name, number, operator or escape; in a string's content or a comment, a word), or
/// nullopt when `off` lies between tokens: a match must not begin or end there.
std::optional<text::Range> cut_at(TSNode root, std::string_view src, size_t off);

}  // namespace sitepatch::python::detail
