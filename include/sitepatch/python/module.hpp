#pragma once
// A Python source parsed once with tree-sitter-python: find qualified names, compute
// the edits a recipe asks for, check the result. No I/O: the host fetched the bytes.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::python {

/// One definition in a module, for lookups and "did you mean".
struct Definition {
  std::string qualified;  // Class.method, outer.inner
  recipe::TargetKind kind;
  int line;               // 1-based line of `def`/`class`/assignment (decorators excluded)
};

enum class Outcome { will_apply, already_applied, failed };

enum class Failure {
  none,
  not_found,   // target name not defined here (see `nearest`)
  ambiguous,   // defined more than once and no occurrence given (see `lines`)
  mismatch,    // e.g. replace `old` found a number of times other than `count`
  conflict,    // overlaps another edit of the same file
  invalid,     // edit cannot apply to this kind of target (e.g. set-value on a def)
};

struct EditResult {
  Outcome outcome = Outcome::will_apply;
  Failure failure = Failure::none;
  std::string message;              // why it failed, or a note
  int line = 0;                     // 1-based line of the target in the original source
  std::vector<std::string> nearest; // not_found: closest names defined in this module
  std::vector<int> lines;           // ambiguous: every line the name is defined at
  std::string original;             // the target's text before the edit, decorators included
                                    // (its fingerprint tells when upstream changed it)
};

/// A name a module binds with a top-level `from M import N [as B]`: re-exports are
/// followed through these. `name` is "*" for `from M import *`.
struct ImportedName {
  std::string bound;   // the name in this module ("*" for a star import)
  std::string module;  // as written: "..quantization.fp4", "torch"
  std::string name;    // the name in `module`
  int line = 0;
};

struct SyntaxProblem {
  int line;    // 1-based
  int column;  // 1-based
  std::string message;  // "syntax error" / "missing ')'"
};

/// One replaced range, as apply() made it: bytes [old_begin, old_end) of the old
/// source became [new_begin, new_end) of the new one (offsets in the UTF-8 text, which
/// are the bytes themselves for a UTF-8 module).
struct TextChange {
  size_t old_begin, old_end, new_begin, new_end;
  size_t edit = SIZE_MAX;  // which of apply()'s edits made it (index into its `edits`)
};

/// A name code uses that nothing binds where it is used: no enclosing function, not
/// the module (imports, definitions, assignments, `global`), not a builtin.
struct FreeName {
  std::string name;
  size_t offset;                 // byte offset of its first use, in source()
  bool class_attribute = false;  // an enclosing class body binds it (its methods do not see it)
};

/// A parsed module. Holds the source and its tree; parsing happens once, in the constructor.
/// The source is in the module's own encoding (PEP 263 coding line, UTF-8 by default;
/// CR-only line ends allowed); the tree, offsets and edits work on it as UTF-8, and
/// apply() gives the new source back in the module's encoding and line ends.
class Module {
 public:
  /// Parses `source`; throws Error naming `name` (the file, for messages) and the
  /// offending byte when the source is not valid in the encoding it declares.
  explicit Module(std::string source, std::string name = "");
  ~Module();
  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;

  const std::string& source() const;

  /// Every function, class and module/class-level variable, in source order.
  std::vector<Definition> definitions() const;

  /// Whether `qualified` is defined (any kind).
  bool defines(std::string_view qualified) const;

  /// The module's top-level `from ... import ...` bindings, in source order.
  std::vector<ImportedName> imported_names() const;

  /// Applies `edits` (all aimed at this file, in recipe order) to the source.
  /// `results` gets one entry per edit. Edits are located on this one parse and
  /// applied together; an edit that failed is left out of `new_source`. `others` are
  /// the lines other recipes wrote in this file: a new import is not put next to one,
  /// so that each recipe can be rolled back apart from the others.
  std::string apply(const std::vector<const recipe::Edit*>& edits,
                    std::vector<EditResult>& results,
                    std::vector<TextChange>* changes = nullptr,
                    const std::set<std::string>* others = nullptr) const;

  /// The module `new_source` (this source with `changes` made, as apply() reports
  /// them), parsed incrementally: what the edits did not touch is not parsed again.
  Module edited(std::string new_source, const std::vector<TextChange>& changes) const;

  /// The free names used within `ranges` (byte ranges [first, second) of source(), not
  /// overlapping), each once, in order of use. `builtins` are the interpreter's (empty:
  /// a fixed Python 3 list). nullopt when the module's names cannot be known: a star
  /// import, or bindings no syntax tree shows (globals(), exec(code), enum's global_enum).
  std::optional<std::vector<FreeName>> free_names(const std::vector<std::pair<size_t, size_t>>& ranges,
                                                  const std::vector<std::string>& builtins) const;

  /// ERROR and MISSING nodes of this source's tree.
  std::vector<SyntaxProblem> syntax_problems() const;

  /// Rows [first, last] (0-based) of each top-level statement, comments left out;
  /// nullopt when rows of the tree are not lines of the bytes (a source in an encoding
  /// other than UTF-8, or with lone CR line ends). For python::compile_view.
  std::optional<std::vector<std::pair<size_t, size_t>>> top_level_rows() const;

 private:
  struct Impl;
  Module() = default;
  std::unique_ptr<Impl> impl_;
};

/// How many sources this process has parsed so far (benchmarks check that no file
/// is parsed twice in one command).
std::size_t parse_count();

/// Whether `text` defines `name` at its top level where it says so plainly (`def name(`,
/// `async def name(`, `class name` at column 0), without parsing it. False says nothing:
/// ask a Module. A line like that inside a string is a false yes.
bool plainly_defines(std::string_view text, std::string_view name);

/// Whether `name` is one of Python 3.8-3.13's builtins (`open`, `len`, `ValueError`).
bool is_builtin_name(std::string_view name);

}  // namespace sitepatch::python
