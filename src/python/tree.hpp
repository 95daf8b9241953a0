#pragma once
// Thin helpers over the tree-sitter C API: parse once, walk children with a cursor
// (ts_node_child is linear per call, a cursor keeps walks linear), read node text.
#include <tree_sitter/api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/util/error.hpp"

extern "C" const TSLanguage* tree_sitter_python();

namespace sitepatch::python::ts {

/// What every parse on this thread keeps to: a text of at most `max_bytes`, parsed
/// within `base_micros` plus `micros_per_mib` for each MiB (tests lower them).
struct Bounds {
  std::size_t max_bytes = std::size_t(64) << 20;
  std::uint64_t base_micros = 5'000'000;
  std::uint64_t micros_per_mib = 2'000'000;
};
Bounds& bounds();

/// A parse refused or stopped by `bounds()`; the message names `what` was parsed.
class ParseLimit : public Error {
 public:
  using Error::Error;
};

/// One file's parse time, shared by every parse on this thread while it lives: a scan
/// parses a file's blocks (round after round, then maybe the whole file), and together
/// they keep to the bound one parse of the whole file has (bounds() for `file_bytes`).
/// The parse that runs out throws ParseLimit with that bound and the file's size.
class FileBudget {
 public:
  explicit FileBudget(std::size_t file_bytes);
  ~FileBudget();  // the budget it replaced (if any) applies again
  FileBudget(const FileBudget&) = delete;
  FileBudget& operator=(const FileBudget&) = delete;

  std::size_t file_bytes;
  std::uint64_t limit_micros;
  std::uint64_t spent_micros = 0;  // by the parses so far

 private:
  FileBudget* outer_;
};

/// Owns a TSTree; the source it was parsed from is kept by the caller. Each constructor
/// throws ParseLimit, naming `what` (a file, say; "" for a Python text), when `text`
/// is larger than bounds() allow or takes longer to parse.
class Tree {
 public:
  /// Parses `text` as Python (no I/O).
  explicit Tree(std::string_view text, std::string_view what = {});
  /// Parses only `range` of `text` (one top-level statement, say); nodes keep their
  /// positions in the whole text.
  Tree(std::string_view text, const TSRange& range, std::string_view what = {});
  /// Parses `text`, an edit of `base`'s text described by `edits` (in order, each in
  /// the coordinates left by the ones before), reusing the subtrees they did not touch.
  Tree(std::string_view text, const Tree& base, const std::vector<TSInputEdit>& edits,
       std::string_view what = {});
  ~Tree();
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  TSNode root() const { return ts_tree_root_node(tree_); }

 private:
  TSTree* tree_ = nullptr;
};

/// Whether `n` is a node of grammar type `type`.
inline bool is(TSNode n, std::string_view type) {
  return !ts_node_is_null(n) && type == ts_node_type(n);
}

/// The named children of `n`, in order.
std::vector<TSNode> named_children(TSNode n);

/// Every child of `n` (named or not) with its field name, or "" when it has none.
struct Child {
  TSNode node;
  std::string_view field;
};
std::vector<Child> children(TSNode n);

/// The child in field `name`, or a null node.
TSNode field(TSNode n, std::string_view name);

/// The source bytes `n` spans.
inline std::string_view text(std::string_view src, TSNode n) {
  return src.substr(ts_node_start_byte(n), ts_node_end_byte(n) - ts_node_start_byte(n));
}

/// The value of a plain string literal ("win32", 'x'); nullopt for anything else: an
/// f-string or one with a prefix, escapes or triple quotes, whose value the text is not.
std::optional<std::string> plain_string(std::string_view src, TSNode n);

/// 1-based line of `n`'s first byte.
inline int line(TSNode n) { return int(ts_node_start_point(n).row) + 1; }

}  // namespace sitepatch::python::ts
