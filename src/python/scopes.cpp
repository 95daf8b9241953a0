// Free names: which names new code uses that nothing binds where it is used (no
// enclosing function, not the module, not a builtin), so that plan can say
// "uses `torch`, which the module never imports" before run time does. Python's own
// scope rules: a name bound anywhere in a function is local to it (even bound later),
// class bodies are not seen from the functions inside them, comprehensions and lambdas
// are scopes, `global`/`nonlocal` redirect. One walk with an explicit stack (deep
// expressions must not exhaust a thread's stack), then one resolution pass.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <unordered_set>

#include "python/module_impl.hpp"
#include "python/tree.hpp"

namespace sitepatch::python {
namespace {

// Python 3.8-3.13's builtins, for when the environment's interpreter did not list its own.
const char* const kBuiltins[] = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
    "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
    "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError",
    "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "None", "NotADirectoryError",
    "NotImplemented", "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning",
    "PermissionError", "ProcessLookupError", "PythonFinalizationError", "RecursionError",
    "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration",
    "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError",
    "TimeoutError", "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
    "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning",
    "ValueError", "Warning", "ZeroDivisionError", "__build_class__", "__debug__", "__doc__",
    "__import__", "__loader__", "__name__", "__package__", "__spec__", "abs", "aiter", "all", "anext",
    "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr",
    "classmethod", "compile", "complex", "copyright", "credits", "delattr", "dict", "dir", "divmod",
    "enumerate", "eval", "exec", "exit", "filter", "float", "format", "frozenset", "getattr",
    "globals", "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass",
    "iter", "len", "license", "list", "locals", "map", "max", "memoryview", "min", "next", "object",
    "oct", "open", "ord", "pow", "print", "property", "quit", "range", "repr", "reversed", "round",
    "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type",
    "vars", "zip"};

// Names every module has without binding them, and the ones Python gives a class body
// and the methods in it.
const char* const kImplicit[] = {"__name__", "__doc__", "__file__", "__spec__", "__loader__",
                                 "__package__", "__builtins__", "__path__", "__cached__",
                                 "__annotations__", "__dict__", "__class__", "__module__",
                                 "__qualname__"};

enum class Kind { module, function, class_, comprehension };

struct Scope {
  int parent;
  Kind kind;
  std::unordered_set<std::string_view> bound, globals, nonlocals;
};

struct Use {
  int scope;
  std::string_view name;
  size_t offset;
};

// How a node's identifiers count: read (expr), bound (target), a match pattern (a bare
// name captures, a dotted one is read), or not at all (skip: an annotation that is never
// evaluated).
enum class Mode { expr, target, pattern, skip };

struct Work {
  TSNode node;
  int scope;
  Mode mode;
};

class ScopeWalker {
 public:
  ScopeWalker(std::string_view src, bool lazy_annotations) : src_(src), lazy_(lazy_annotations) {
    scopes_.push_back({-1, Kind::module, {}, {}, {}});
  }

  void run(TSNode root) {
    stack_.push_back({root, 0, Mode::expr});
    while (!stack_.empty()) {
      Work w = stack_.back();
      stack_.pop_back();
      visit(w);
    }
  }

  std::vector<Scope> scopes_;
  std::vector<Use> uses_;
  bool star_ = false;
  std::function<bool(size_t)> keep_;  // which uses to record (by offset); all when empty
  bool dynamic_ = false;  // the module binds names a syntax tree cannot see (globals(), exec)

 private:
  std::string_view name(TSNode n) const { return ts_node_is_null(n) ? std::string_view() : ts::text(src_, n); }
  void push(TSNode n, int scope, Mode mode) {
    if (!ts_node_is_null(n)) stack_.push_back({n, scope, mode});
  }
  // Children are pushed in reverse so that they are visited in source order.
  void push_children(TSNode n, int scope, Mode mode) {
    auto kids = ts::named_children(n);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) push(*it, scope, mode);
  }
  int new_scope(int parent, Kind k) {
    scopes_.push_back({parent, k, {}, {}, {}});
    return int(scopes_.size() - 1);
  }
  // A name declared `global` in its scope is bound in the module's.
  void bind(int scope, TSNode id) {
    if (ts_node_is_null(id)) return;
    std::string_view n = name(id);
    if (scopes_[size_t(scope)].globals.count(n)) scope = 0;
    scopes_[size_t(scope)].bound.insert(n);
  }
  void use(int scope, TSNode id) {
    std::string_view n = name(id);
    if (n == "globals" || n == "global_enum") dynamic_ = true;
    size_t at = ts_node_start_byte(id);
    if (!keep_ || keep_(at)) uses_.push_back({scope, n, at});
  }
  // The scope a walrus binds in: the nearest that is not a comprehension.
  int walrus_scope(int s) const {
    while (scopes_[size_t(s)].kind == Kind::comprehension && scopes_[size_t(s)].parent >= 0)
      s = scopes_[size_t(s)].parent;
    return s;
  }
  // Annotations are not evaluated under `from __future__ import annotations`.
  Mode annotation() const { return lazy_ ? Mode::skip : Mode::expr; }

  void visit(const Work& w);
  bool visit_binding(TSNode n, int scope, std::string_view type);
  void visit_target(TSNode n, int scope);
  void visit_pattern(TSNode n, int scope);
  void visit_parameters(TSNode params, int outer, int inner);
  int type_scope(TSNode def, int scope);
  void visit_function(TSNode n, int scope);
  void visit_class(TSNode n, int scope);
  void visit_comprehension(TSNode n, int scope);
  void visit_import(TSNode n, int scope);

  std::string_view src_;
  bool lazy_;
  std::vector<Work> stack_;
};

void ScopeWalker::visit(const Work& w) {
  TSNode n = w.node;
  int s = w.scope;
  if (w.mode == Mode::skip) return;
  if (w.mode == Mode::target) return visit_target(n, s);
  if (w.mode == Mode::pattern) return visit_pattern(n, s);
  std::string_view t = ts_node_type(n);
  if (t == "identifier") return use(s, n);
  if (t == "comment" || t == "string_content" || t == "escape_sequence") return;
  if (t == "attribute") {
    // enum's `_convert_` and `global_enum` put members into the module's globals.
    std::string_view attr = name(ts::field(n, "attribute"));
    if (attr == "_convert_" || attr == "global_enum") dynamic_ = true;
    return push(ts::field(n, "object"), s, Mode::expr);
  }
  if (t == "call") {
    // exec(code) with no namespace runs in (and binds into) the caller's globals.
    TSNode fn = ts::field(n, "function");
    TSNode args = ts::field(n, "arguments");
    if (ts::is(fn, "identifier") && name(fn) == "exec" && ts_node_named_child_count(args) == 1) dynamic_ = true;
  }
  if (t == "keyword_argument") return push(ts::field(n, "value"), s, Mode::expr);
  if (t == "dotted_name") {  // outside imports: `a.b.c` is a read of `a`
    TSNode first = ts_node_named_child(n, 0);
    if (ts::is(first, "identifier")) use(s, first);
    return;
  }
  if (t == "function_definition") return visit_function(n, s);
  if (t == "class_definition") return visit_class(n, s);
  if (t == "lambda") {
    int inner = new_scope(s, Kind::function);
    push(ts::field(n, "body"), inner, Mode::expr);
    visit_parameters(ts::field(n, "parameters"), s, inner);
    return;
  }
  if (t == "list_comprehension" || t == "set_comprehension" || t == "dictionary_comprehension" ||
      t == "generator_expression")
    return visit_comprehension(n, s);
  if (t == "import_statement" || t == "import_from_statement" || t == "future_import_statement")
    return visit_import(n, s);
  if (visit_binding(n, s, t)) return;
  if (t == "type") return push_children(n, s, annotation());
  push_children(n, s, Mode::expr);
}

// The statements and expressions that bind names (besides definitions and imports):
// assignments, loops, `except`/`with ... as`, walrus, `del`, match cases, type aliases,
// `global`/`nonlocal`. False when `n` is none of them.
bool ScopeWalker::visit_binding(TSNode n, int s, std::string_view t) {
  if (t == "global_statement" || t == "nonlocal_statement") {
    for (TSNode id : ts::named_children(n)) {
      if (!ts::is(id, "identifier")) continue;
      if (t == "global_statement") {
        scopes_[size_t(s)].globals.insert(name(id));
      } else {
        scopes_[size_t(s)].nonlocals.insert(name(id));
      }
    }
    return true;
  }
  if (t == "assignment") {
    push(ts::field(n, "right"), s, Mode::expr);
    TSNode type = ts::field(n, "type");
    bool local = scopes_[size_t(s)].kind == Kind::function;
    push(type, s, local ? Mode::skip : annotation());  // a local's annotation is never evaluated
    push(ts::field(n, "left"), s, Mode::target);
    return true;
  }
  if (t == "augmented_assignment") {
    push(ts::field(n, "right"), s, Mode::expr);
    push(ts::field(n, "left"), s, Mode::target);
    push(ts::field(n, "left"), s, Mode::expr);  // `x += 1` reads x too
    return true;
  }
  if (t == "named_expression") {
    push(ts::field(n, "value"), s, Mode::expr);
    TSNode id = ts::field(n, "name");
    if (ts::is(id, "identifier")) bind(walrus_scope(s), id);
    return true;
  }
  if (t == "for_statement") {
    for (const auto& c : ts::children(n)) {
      if (!ts_node_is_named(c.node)) continue;
      push(c.node, s, c.field == "left" ? Mode::target : Mode::expr);
    }
    return true;
  }
  if (t == "except_clause") {
    for (const auto& c : ts::children(n)) {
      if (!ts_node_is_named(c.node)) continue;
      push(c.node, s, c.field == "alias" ? Mode::target : Mode::expr);
    }
    return true;
  }
  if (t == "as_pattern") {  // `with x as y`, `except* E as e`
    for (const auto& c : ts::children(n)) {
      if (!ts_node_is_named(c.node)) continue;
      push(c.node, s, c.field == "alias" ? Mode::target : Mode::expr);
    }
    return true;
  }
  if (t == "delete_statement") {  // `del x` makes x local, as an assignment does
    push_children(n, s, Mode::target);
    return true;
  }
  if (t == "case_clause") {
    for (const auto& c : ts::children(n)) {
      if (!ts_node_is_named(c.node)) continue;
      push(c.node, s, ts::is(c.node, "case_pattern") ? Mode::pattern : Mode::expr);
    }
    return true;
  }
  if (t == "type_alias_statement") {
    push(ts::field(n, "right"), s, Mode::skip);  // evaluated lazily
    push(ts::field(n, "left"), s, Mode::target);
    return true;
  }
  return false;
}

void ScopeWalker::visit_target(TSNode n, int s) {
  std::string_view t = ts_node_type(n);
  if (t == "identifier") return bind(s, n);
  if (t == "pattern_list" || t == "tuple_pattern" || t == "list_pattern" || t == "tuple" || t == "list" ||
      t == "expression_list" || t == "parenthesized_expression" || t == "list_splat_pattern" ||
      t == "list_splat" || t == "as_pattern_target" || t == "type" || t == "generic_type" ||
      t == "type_parameter" || t == "dictionary_splat_pattern" ||
      t == "expression_statement")
    return push_children(n, s, Mode::target);
  if (t == "comment") return;
  push(n, s, Mode::expr);  // a.b = ..., a[i] = ...: reads a (and i)
}

void ScopeWalker::visit_pattern(TSNode n, int s) {
  std::string_view t = ts_node_type(n);
  if (t == "dotted_name") {
    auto ids = ts::named_children(n);
    if (ids.size() == 1) {
      if (name(ids[0]) != "_") bind(s, ids[0]);  // a capture
    } else if (!ids.empty()) {
      use(s, ids[0]);  // a value pattern: Color.RED
    }
    return;
  }
  if (t == "identifier") return bind(s, n);
  if (t == "class_pattern") {
    auto kids = ts::named_children(n);
    for (size_t i = 0; i < kids.size(); ++i) {
      if (i == 0 && ts::is(kids[i], "dotted_name")) {
        push(kids[i], s, Mode::expr);  // the class is read
        continue;
      }
      push(kids[i], s, Mode::pattern);
    }
    return;
  }
  if (t == "keyword_pattern") {  // `x=px`: x names an attribute, px captures
    auto kids = ts::named_children(n);
    for (size_t i = 1; i < kids.size(); ++i) push(kids[i], s, Mode::pattern);
    return;
  }
  if (t == "dict_pattern") {
    for (const auto& c : ts::children(n)) {
      if (!ts_node_is_named(c.node)) continue;
      push(c.node, s, c.field == "key" ? Mode::expr : Mode::pattern);
    }
    return;
  }
  if (t == "as_pattern") {
    for (const auto& c : ts::children(n)) {
      if (!ts_node_is_named(c.node)) continue;
      push(c.node, s, c.field == "alias" ? Mode::target : Mode::pattern);
    }
    return;
  }
  if (t == "string" || t == "concatenated_string") return push(n, s, Mode::expr);
  push_children(n, s, Mode::pattern);
}

void ScopeWalker::visit_parameters(TSNode params, int outer, int inner) {
  if (ts_node_is_null(params)) return;
  for (TSNode p : ts::named_children(params)) {
    std::string_view t = ts_node_type(p);
    if (t == "identifier") {
      bind(inner, p);
    } else if (t == "default_parameter" || t == "typed_default_parameter") {
      push(ts::field(p, "value"), outer, Mode::expr);
      push(ts::field(p, "type"), outer, annotation());
      push(ts::field(p, "name"), inner, Mode::target);
    } else if (t == "typed_parameter") {
      push(ts::field(p, "type"), outer, annotation());
      for (TSNode c : ts::named_children(p))
        if (!ts::is(c, "type")) push(c, inner, Mode::target);
    } else if (t == "list_splat_pattern" || t == "dictionary_splat_pattern" || t == "tuple_pattern") {
      push_children(p, inner, Mode::target);
    }
  }
}

// PEP 695 type parameters (`def f[T](x: T)`, `class C[T]`) live in a scope of their own
// around the definition: its annotations and its body (methods too) see them.
int ScopeWalker::type_scope(TSNode def, int s) {
  TSNode params{};
  for (const auto& c : ts::children(def))
    if (c.field == "type_parameters") params = c.node;
  if (ts_node_is_null(params)) return s;
  int scope = new_scope(s, Kind::function);
  push(params, scope, Mode::target);
  return scope;
}

void ScopeWalker::visit_function(TSNode n, int s) {
  bind(s, ts::field(n, "name"));
  int outer = type_scope(n, s);
  int inner = new_scope(outer, Kind::function);
  push(ts::field(n, "body"), inner, Mode::expr);
  push(ts::field(n, "return_type"), outer, annotation());
  visit_parameters(ts::field(n, "parameters"), outer, inner);
}

void ScopeWalker::visit_class(TSNode n, int s) {
  bind(s, ts::field(n, "name"));
  int outer = type_scope(n, s);
  int inner = new_scope(outer, Kind::class_);
  push(ts::field(n, "body"), inner, Mode::expr);
  push(ts::field(n, "superclasses"), outer, Mode::expr);
}

void ScopeWalker::visit_comprehension(TSNode n, int s) {
  // The first iterable is evaluated in the enclosing scope (so a class body's
  // `[x for x in NAMES]` sees the class's NAMES); the rest in the comprehension's.
  int inner = new_scope(s, Kind::comprehension);
  auto kids = ts::named_children(n);
  TSNode first{};
  for (TSNode c : kids)
    if (ts::is(c, "for_in_clause")) {
      first = c;
      break;
    }
  for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
    TSNode c = *it;
    if (!ts::is(c, "for_in_clause")) {
      push(c, inner, Mode::expr);
      continue;
    }
    bool outer = ts_node_eq(c, first);
    auto parts = ts::children(c);
    for (auto p = parts.rbegin(); p != parts.rend(); ++p) {
      if (!ts_node_is_named(p->node)) continue;
      if (p->field == "left") push(p->node, inner, Mode::target);
      else push(p->node, outer ? s : inner, Mode::expr);
    }
  }
}

void ScopeWalker::visit_import(TSNode n, int s) {
  for (const auto& c : ts::children(n)) {
    if (ts::is(c.node, "wildcard_import")) {
      if (scopes_[size_t(s)].kind == Kind::module) star_ = true;
      continue;
    }
    if (c.field != "name") continue;
    if (ts::is(c.node, "aliased_import")) {
      bind(s, ts::field(c.node, "alias"));
    } else if (ts::is(c.node, "dotted_name")) {
      TSNode first = ts_node_named_child(c.node, 0);  // `import a.b` binds a
      if (!ts_node_is_null(first)) bind(s, first);
    }
  }
}

// Whether the module starts with `from __future__ import annotations`.
bool lazy_annotations(TSNode root, std::string_view src) {
  for (TSNode stmt : ts::named_children(root)) {
    if (ts::is(stmt, "future_import_statement")) {
      if (ts::text(src, stmt).find("annotations") != std::string_view::npos) return true;
      continue;
    }
    if (ts::is(stmt, "comment") || ts::is(stmt, "expression_statement")) continue;  // docstring
    break;
  }
  return false;
}

}  // namespace

std::optional<std::vector<FreeName>> Module::free_names(const std::vector<std::pair<size_t, size_t>>& ranges,
                                                        const std::vector<std::string>& builtins) const {
  std::string_view src = impl_->text();
  TSNode root = impl_->tree->root();
  // Only the uses inside `ranges` are kept (offsets there count the BOM; the tree's do not).
  size_t bom = impl_->bom;
  std::vector<std::pair<size_t, size_t>> sorted(ranges);
  std::sort(sorted.begin(), sorted.end());
  auto inside = [&](size_t at) {
    auto it = std::upper_bound(sorted.begin(), sorted.end(), std::pair{at, SIZE_MAX});
    if (it == sorted.begin()) return false;
    --it;  // ranges do not overlap: the last one starting at or before `at` decides
    return it->first <= at && at < it->second;
  };
  ScopeWalker w(src, lazy_annotations(root, src));
  w.keep_ = [&](size_t at) { return inside(at + bom); };
  w.run(root);
  if (w.star_ || w.dynamic_) return std::nullopt;

  std::unordered_set<std::string_view> known(std::begin(kImplicit), std::end(kImplicit));
  if (builtins.empty())
    known.insert(std::begin(kBuiltins), std::end(kBuiltins));
  else
    for (const auto& b : builtins) known.insert(b);

  auto resolves = [&](const Use& u) {
    bool first = true;
    for (int s = u.scope; s >= 0; s = w.scopes_[size_t(s)].parent, first = false) {
      const Scope& sc = w.scopes_[size_t(s)];
      if (sc.globals.count(u.name)) return w.scopes_[0].bound.count(u.name) > 0;
      if (sc.nonlocals.count(u.name)) return true;
      // A class body is seen by its own statements only, not by the functions in it.
      if ((first || sc.kind != Kind::class_) && sc.bound.count(u.name)) return true;
    }
    return false;
  };

  std::vector<FreeName> out;
  std::set<std::string_view> reported;
  for (const Use& u : w.uses_) {
    size_t at = u.offset + bom;
    if (known.count(u.name) || resolves(u)) continue;
    if (!reported.insert(u.name).second) continue;
    bool in_class = false;
    for (int sc = u.scope; sc >= 0; sc = w.scopes_[size_t(sc)].parent)
      if (w.scopes_[size_t(sc)].kind == Kind::class_ && w.scopes_[size_t(sc)].bound.count(u.name)) in_class = true;
    out.push_back({std::string(u.name), at, in_class});
  }
  return out;
}

bool is_builtin_name(std::string_view name) {
  for (const char* b : kBuiltins)
    if (name == b) return true;
  return false;
}

}  // namespace sitepatch::python
