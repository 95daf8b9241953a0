#pragma once
// Private to src/audit: what a node of a module's syntax tree says on its own, read from
// the source text alone: dotted names, annotations, literals, what a call makes, a call's
// arguments. Nothing here knows the module's facts; the Extractor (extract.cpp) derives
// from it and records what these readings mean.
#include <tree_sitter/api.h>

#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::audit::detail {

// functools helpers whose result stands for the function they are given (dynamo traces
// through them, and so does audit).
bool wraps_function(std::string_view dotted);

class NodeReader {
 public:
  explicit NodeReader(std::string_view src) : src_(src) {}

  std::string text(TSNode n) const;  // the node's source text

  // "a.b.c" for an identifier or a chain of attributes on one; "" otherwise.
  std::string dotted(TSNode n) const;

  // A block whose last statement leaves it (return, raise, continue, break).
  static bool leaves(TSNode block);

  // A call's arguments that are a call of a name or a name (Ref::values).
  std::string argument_values(TSNode args) const;


  // An annotation as one dotted class name: quotes dropped, Optional[X], Union[X, None]
  // and X | None read as X. "" for anything else (a generic, a union of two classes).
  // With `class_itself` (a return annotation), `type[X]` reads as X.
  std::string type_name(TSNode type, bool class_itself = false) const;

  // What each item of a container annotation holds: `List[Path]`, `Optional[list[Path]]`,
  // `Sequence[Path]`, `Tuple[Path, ...]` -> "Path"; "" for anything else.
  std::string element_type_name(TSNode type) const;

  // `(Path(x) / "y")` is what Path(x) is (a path joined to more is a path): the
  // expression with parentheses and the left operands of `/` taken away.
  TSNode path_base(TSNode n) const;

  // `X(...)`, `(Path(x) / "y")`: the dotted name whose call makes the value, or "".
  std::string made_by(TSNode value) const;

  // The builtin class a literal or comprehension makes (`flags = []`, `name = f"..."`),
  // or "": its methods are the builtin's (`flags.append`), which no code of the
  // environment defines.
  std::string literal_class(TSNode value) const;

  // What calling makes the value, or the builtin its literal makes.
  std::string made_or_literal(TSNode value) const;

  // What each item of a list, tuple or set literal (or comprehension) holds, when all
  // say the same: `[Path(a), Path(b)]`, `[Path(x) for x in xs]` -> "Path"; else "".
  std::string element_class(TSNode value) const;

  // The strings of a list, tuple or set of plain string literals (`("makedirs", "stat")`).
  std::vector<std::string> literal_strings(TSNode value) const;

  // `Path(x).resolve().parent`: a call of a dotted name, then methods called and
  // attributes read on what it made, spelled "Path().resolve().parent"; "" for any
  // other expression, or one longer than a few steps (the walk reads each in turn).
  std::string value_steps(TSNode n, int budget = 8) const;

  // "d.[]" for `d[k]` where d is a dotted name; "" otherwise.
  std::string item_of(TSNode n) const;

  // `getattr(x, "name")` -> "x.name", `getattr(x, name)` -> "x.[getattr]"; "" for
  // anything else (a default argument changes nothing: the attribute or not).
  std::string got_attribute(TSNode n) const;

  // The arguments of `getattr(x, name[, default])`; empty for any other call.
  std::vector<TSNode> getattr_arguments(TSNode n) const;

  // A name Python allows for an attribute (`getattr(x, "a-b")` makes none).
  static bool plain_name(const std::string& s);

  // "a,b" when every item of a dict or list literal is a dotted name, else "".
  std::string items(TSNode n) const;

  // `g = f`, `g = functools.lru_cache(maxsize=None)(f)`, `g = functools.partial(f, 1)`.
  std::string alias_of(TSNode rhs) const;

 protected:
  std::string_view src_;
};

}  // namespace sitepatch::audit::detail
