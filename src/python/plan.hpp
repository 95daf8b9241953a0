#pragma once
// What the actions share: the file being edited, the byte-range edits they return,
// and one function per action. Each action reads the one parse of the original and
// returns splices against the original bytes; apply.cpp combines them.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "python/definitions.hpp"
#include "python/text.hpp"
#include "python/tree.hpp"
#include "sitepatch/python/module.hpp"

namespace sitepatch::python {

/// The file an apply works on (BOM already stripped: offsets are into `src`).
struct Context {
  std::string_view src;
  TSNode root;
  const Definitions& defs;
  text::Style style;
  const std::set<std::string>* others = nullptr;  // lines other recipes wrote in this file
};

/// Replace bytes [begin, end) of the original with `text` (begin == end: insert).
struct Splice {
  size_t begin;
  size_t end;
  std::string text;
  bool import = false;  // ensure-import insertions go first at their offset and never conflict
};

/// What an action produced: splices, or nothing because it is already applied.
struct ActionOut {
  std::vector<Splice> splices;
  bool already = false;
};

/// Fails `r` with `f` and `message`; returns false so actions can `return fail(...)`.
bool fail(EditResult& r, Failure f, std::string message);


/// The definition `e` aims at, or nullptr with `r` failed (not found, ambiguous, wrong kind).
const Def* locate(const Context& cx, const recipe::Edit& e, EditResult& r);

/// Indentation of the line that holds `off`.
std::string_view indent_at(std::string_view src, size_t off);

/// The file's indent unit (from its first indented block) and line ending.
text::Style detect_style(TSNode root, std::string_view src);

// One function per action; each returns false with `r` failed when it cannot apply.
bool replace_body(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                  EditResult& r);
bool prepend_body(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                  EditResult& r);
bool add_decorator(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                   EditResult& r);
bool remove_decorator(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                      EditResult& r);
bool replace_function(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                      EditResult& r);
bool replace_text(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                  EditResult& r);
/// replace with no target: `old` -> `new` anywhere in the module (its own lines, outside
/// any definition, are what capture writes these for).
bool replace_in_module(const Context& cx, const recipe::Edit& e, ActionOut& out, EditResult& r);
bool set_value(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
               EditResult& r);
bool insert_after(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                  EditResult& r);
/// insert-before (anchor.cpp): `code` right above the statement `anchor` names.
bool insert_before(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out,
                   EditResult& r);
/// insert-before, or insert-after with `anchor`: `code` at the anchor statement's
/// indentation, above it or below it (below its whole block for a compound statement).
bool insert_at_anchor(const Context& cx, const Def& d, const recipe::Edit& e, bool before, ActionOut& out,
                      EditResult& r);

/// The statements of a function's body at any depth (inside `if`, loops, `with`, `try`,
/// nested definitions), in source order; comments are none.
std::vector<TSNode> body_statements(TSNode def);
/// A compound statement's header (`if x > 0:`, decorators and `def f():`), trimmed;
/// "" for a simple statement.
std::string statement_header(std::string_view src, TSNode s);
/// What an anchor is compared by: `text`'s lines with their spaces trimmed, blank lines
/// dropped.
std::string anchor_key(std::string_view text);
/// The statements of `def`'s body that `anchor` names: by their whole text or, for a
/// compound statement, by its header.
std::vector<TSNode> anchored(std::string_view src, TSNode def, std::string_view anchor);
/// Whether `anchor` names exactly one statement of `def`, one new lines can go beside.
bool lone_anchor(std::string_view src, TSNode def, std::string_view anchor);
/// register-custom-op (custom_op.cpp): torch.library.custom_op outermost, the fake after.
bool register_custom_op(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out, EditResult& r);
/// The custom_op decorator register-custom-op puts on `d`; "" with `why` set when its
/// schema cannot be told from the def (no `op-schema` given).
std::string custom_op_decorator(const Context& cx, const Def& d, const recipe::Edit& e, std::string& why);

/// The byte ranges of the string literals (f-, byte and raw strings too) in `code`.
std::vector<text::Range> string_ranges(std::string_view code);
/// The same in a parsed tree, for the literals that reach into bytes [begin, end).
std::vector<text::Range> string_ranges(TSNode root, size_t begin, size_t end);

/// `code` re-indented as text::reindent does, keeping every string literal byte for byte.
std::string reindent_code(std::string_view code, std::string_view prefix, const text::Style& style);

/// Whether `current` (source text) already is `code` (re-indented at `indent`): equal up
/// to trailing whitespace and line endings, with string literals equal exactly.
bool same_code(std::string_view current, std::string_view code, std::string_view indent);

/// A range replacement that ends at a file end without a final newline keeps it so.
std::string fit_end(std::string_view src, size_t end, std::string text, std::string_view eol);

}  // namespace sitepatch::python
