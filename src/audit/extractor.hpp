#pragma once
// Private to src/audit: the one pass over a module's syntax tree that makes its
// ModuleFacts. Its parts, one file each: extract.cpp walks the tree with a cursor and
// knows each node's context (the Frame); extract_refs.cpp records the names a function
// uses (calls, references, what an operator calls without one written);
// extract_bindings.cpp records what names are bound to (imports, definitions,
// assignments) and, for the walk, what values hold.
#include <tree_sitter/api.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "audit/conditions.hpp"
#include "audit/node_reader.hpp"
#include "sitepatch/audit/facts.hpp"

namespace sitepatch::audit::detail {

// What the pass knows of one node from its ancestors.
struct Frame {
  TSNode node{};      // the node itself (its children ask for their parent here: ts_node_parent
                     // walks down from the root, quadratic in nesting)
  int fn = 0;         // whose code this node is
  int cls = -1;       // the class whose body holds this node directly, or -1
  int made_fn = -1;   // a function_definition: the function it defines
  int made_cls = -1;  // a class_definition: the class it defines
  bool in_class_body = false;
  // Names used here are not operations performed: exception types of an except
  // clause, annotations, the types isinstance() checks. Inherited by the subtree.
  bool mute = false;
  bool mute_kids = false;   // set on the node whose children are muted
  bool raise_kids = false;  // a raise statement: the call it raises is an exception made
  bool raised = false;      // this node is the expression a raise statement raises
  // An if or elif: what its condition is on Linux (detail::static_truth); an arm it
  // rules out is `dead` (not read), one only a type checker reads is `type_only`.
  detail::Truth truth = detail::Truth::unknown;
  bool ternary_truth = false;  // a ternary's: its arms lie before and after [truth_start, truth_end)
  uint32_t truth_start = 0, truth_end = 0;
  bool dead = false;
  bool type_only = false;
};

class Extractor : NodeReader {
 public:
  Extractor(std::string_view src, ModuleFacts& m, bool types) : NodeReader(src), types_(types), m_(m) {
    m_.functions.emplace_back();  // the top level
  }

  // Reads one tree: the module's, or one top-level block's (run once per block, in order).
  void run(TSNode root);

  // After the last run(): locals sorted for lookups, names declared global taken out.
  void finish();

 private:
  // extract.cpp: the cursor and each node's context.
  static std::string_view field_name(TSTreeCursor& c);

  // The frame of the node the cursor just moved to, from its parent's.
  void push(std::vector<Frame>& stack, TSTreeCursor& c);

  // An if's arm (`consequence`, or `alternative`: an elif or else) under a condition
  // known on Linux: not read when it cannot run; only for its imports under TYPE_CHECKING.
  static void arm_truth(detail::Truth t, std::string_view fld, Frame& f);

  // What function `fn`'s names (and the module's it does not shadow) say of the platform.
  const detail::KnownNames* known(int fn);

  // Code only a type checker reads runs nothing: its imports may still say what an
  // annotation names (bound after the module's own bindings, which win), the rest is
  // not read. Returns whether to walk the node's children.
  bool type_only(const Frame& f, TSNode n, std::string_view t);

  // Returns whether to walk the node's children.
  bool enter(Frame& f, TSNode n);

  // extract_refs.cpp: the names a function uses.
  // `name.dunder` as a call Python makes without one written (Ref::implicit): the walk's
  // facts only, for a dotted name or a call's result.
  void implicit_ref(const Frame& f, TSNode value, const char* dunder);

  void add_ref(int fn, TSNode at, std::string name, Ref::Kind kind, bool on_result = false);

  void value(const Frame& f, TSNode n, bool stored = false);

  void read_attribute(const Frame& f, TSNode n);

  // Sets `flag` on the value ref value() just made for node n (none when it made none).
  void mark_last_value(const Frame& f, TSNode n, bool Ref::*flag);

  void call(Frame& f, TSNode n);

  // The ref a call makes: its callee as far as it has a name.
  void callee(Frame& f, TSNode n);

  // An attribute read in a condition, a comparison, a boolean or arithmetic operand, an
  // f-string or an assert (`if self.is_built:`): a property runs there as it does on
  // the right of `=` (types_ only: the walk's).
  void attribute_reads(const Frame& f, TSNode n);

  static bool reads_operands(std::string_view t);

  void elements(const Frame& f, TSNode n);

  void arguments(const Frame& f, TSNode n);

  // `if self.is_built:` reads a property; `if x:` runs x.__bool__.
  void condition(const Frame& f, TSNode n);

  // `for x in ...`: x is a local; `for fn in REGISTRY:` makes fn each item of what
  // REGISTRY holds.
  void loop(const Frame& f, TSNode n);

  // The special methods an operator runs: `not x`, `x and y` (__bool__), `for _ in x`
  // (__iter__), `x[k]` read (__getitem__), `x + y` (__add__).
  void implicit_calls(const Frame& f, TSNode n, std::string_view t);

  // `with lock:` enters what the name holds; `with X(...)` is a call (read as such)
  // and then X's __enter__ (and at the end its __exit__).
  void with_item(const Frame& f, TSNode n);

  // extract_bindings.cpp: what names are bound to, what values hold.
  void names_in(TSNode n, std::vector<std::string>& out);

  void parameters(TSNode params, std::vector<std::string>& out, Function* fn = nullptr);

  // Records what `name` holds. A second, different assignment (a call or an expression)
  // is kept beside the first, "call:A|expr:b", up to three: the walk asks whether all
  // make the same class. Any other second one makes it unknown.
  static void typed(Function& fn, const std::string& name, const char* how, const std::string& what);

  void bind(const Frame& f, std::string bound, std::string target);

  void import_statement(const Frame& f, TSNode n);

  void import_from(const Frame& f, TSNode n);

  // Function::is_local before the locals are sorted (while extracting).
  static bool bound_here(const Function& F, const std::string& name);

  // The strings `name` holds in function `fn` or a scope around it (the top level
  // included), when a literal says so; empty otherwise.
  const std::vector<std::string>* strings_of(int fn, const std::string& name) const;

  // What each item of `name` holds (its "name[]" type), in `fn` or a scope around it.
  std::string element_type(int fn, const std::string& name) const;

  // `getattr(m, name)` where name holds one of a few literal strings: "m.a", "m.b".
  std::vector<std::string> getattr_names(int fn, TSNode n) const;

  void assignment(const Frame& f, TSNode n);

  // `__all__ = [...]` (or `+= [...]`): the names a star import of this module binds;
  // anything but string literals makes them unknown.
  void exports(TSNode value, bool more);

  // What `left = right` (or `left: T = right`) tells of the value left holds.
  void assigned_type(const Frame& f, TSNode n, TSNode left, TSNode right);

  // `self.x = X(...)`, `self.x: X = ...`, or `self.x = spec` where the method knows
  // what its local `spec` holds (`def __init__(self, spec: JitSpec)`).
  void self_attribute(const Frame& f, TSNode n, const std::string& attr, TSNode right, const std::string& made);

  // `x: X` or `x = X(...)` in a class body: what its instances' x holds, read in the
  // scope the class is defined in.
  void class_attribute(const Frame& f, TSNode n, TSNode left, TSNode right);

  // Each different thing the code says an attribute holds, in source order, a few at most.
  void attribute_holds(int cls, const std::string& attr, int fn, const std::string& how);

  void decorated(TSNode n);

  void function_definition(Frame& f, TSNode n);

  static bool abstract_class(const Class& c);

  // 1: a body that is only `raise NotImplementedError` (after a docstring); 2: only
  // `...`; 0: anything else.
  int stub_body(TSNode body) const;

  void class_definition(Frame& f, TSNode n);

  // What one `return` of function `fn` makes: the callee of `return X(...)`; anything
  // else but a bare return or `return None` makes the function's result unknown.
  void note_return(int fn, TSNode n);

  std::map<std::string, std::string>& imports_of(const Frame& f) { return m_.functions[f.fn].imports; }

  std::vector<std::string>& locals(const Frame& f) { return m_.functions[f.fn].locals; }

  static constexpr const char* kMixed = "\x01";  // two different results: none inferred
  std::map<int, std::string> returned_;  // function -> what its returns make so far
  bool types_;  // what values hold (Function::types, returns, ...): the walk's, not a scan's
  ModuleFacts& m_;
  std::vector<std::pair<std::string, TSNode>> decorators_;
  std::map<int, std::set<std::string>> globals_;
  Frame here_;  // the frame of the node enter() reads (add_ref takes its guard)
  // Imports only a type checker reads (`if TYPE_CHECKING:`), bound by finish() where
  // nothing else binds the name: function, name, what it names.
  bool deferring_ = false;
  std::vector<std::tuple<int, std::string, std::string>> deferred_;
  std::map<int, detail::KnownNames> known_;  // function (0: the module) -> its platform names
  Frame* parent_ = nullptr;  // its parent's frame

  // The parent of the node being entered (null for the root): the cursor's, not
  // ts_node_parent's (which walks from the root down, quadratic in nesting).
  TSNode parent_node() const { return parent_ ? parent_->node : TSNode{}; }
};

}  // namespace sitepatch::audit::detail
