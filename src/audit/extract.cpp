// One pass over a module's syntax tree with a cursor (no recursion: sympy's deepest
// expressions would exhaust a thread's stack), reading imports, definitions and the
// names each function uses. The context of a node (which function's code it is, and
// whether it sits directly in a class body) follows from its parent and field.
#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "audit/blocks.hpp"
#include "audit/conditions.hpp"
#include "python/tree.hpp"
#include "sitepatch/audit/facts.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit {

namespace {

using python::ts::field;
using python::ts::is;

// functools helpers whose result stands for the function they are given (dynamo traces
// through them, and so does audit).
bool wraps_function(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  std::string_view last = dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
  return last == "cache" || last == "lru_cache" || last == "partial" || last == "wraps" ||
         last == "update_wrapper" || last == "cached_property" || last == "singledispatch" ||
         last == "partialmethod";
}

struct Frame {
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
  int guard = 0;            // Ref::guard of names used here (an index into guards_)
  // An if (or elif, or `X if c else Y`) whose condition is a parameter: the guards of
  // its arms, and where its condition lies (a ternary's arms are told by position).
  int yes = -1, no = -1;
  uint32_t cond_start = 0, cond_end = 0;
  bool ternary = false;
  // A block after `if need_lock: return`: the guard of the statements that follow.
  int rest = -1;
  // An if or elif: what its condition is on Linux (detail::static_truth); an arm it
  // rules out is `dead` (not read), one only a type checker reads is `type_only`.
  detail::Truth truth = detail::Truth::unknown;
  bool dead = false;
  bool type_only = false;
};

class Extractor {
 public:
  Extractor(std::string_view src, ModuleFacts& m, bool types) : src_(src), types_(types), m_(m) {
    m_.functions.emplace_back();  // the top level
  }

  // Reads one tree: the module's, or one top-level block's (run once per block, in order).
  void run(TSNode root) {
    TSTreeCursor c = ts_tree_cursor_new(root);
    std::vector<Frame> stack;
    stack.push_back(Frame{});
    bool descend = enter(stack.back(), root);
    while (true) {
      if (descend && ts_tree_cursor_goto_first_child(&c)) {
        push(stack, c);
        parent_ = &stack[stack.size() - 2];
        descend = enter(stack.back(), ts_tree_cursor_current_node(&c));
        continue;
      }
      bool done = false;
      while (true) {
        stack.pop_back();
        if (stack.empty()) {
          done = true;
          break;
        }
        if (ts_tree_cursor_goto_next_sibling(&c)) {
          push(stack, c);
          parent_ = stack.size() >= 2 ? &stack[stack.size() - 2] : nullptr;
          descend = enter(stack.back(), ts_tree_cursor_current_node(&c));
          break;
        }
        if (!ts_tree_cursor_goto_parent(&c)) {
          done = true;
          break;
        }
      }
      if (done) break;
    }
    ts_tree_cursor_delete(&c);
  }

  // After the last run(): locals sorted for lookups, names declared global taken out.
  void finish() {
    for (auto& [fn, bound, target] : deferred_) m_.functions[size_t(fn)].imports.emplace(bound, target);
    // An unannotated function every `return` of which makes the same thing (`return
    // NinjaSpec()`, bare returns and `return None` aside) returns that, as -> NinjaSpec
    // would say; resolve() decides whether it names a class.
    for (auto& [fn, made] : returned_)
      if (!made.empty() && made != kMixed && m_.functions[size_t(fn)].returns.empty()) {
        m_.functions[size_t(fn)].returns = made;
        m_.functions[size_t(fn)].returns_inferred = true;
      }
    for (size_t i = 0; i < m_.functions.size(); ++i) {
      auto& l = m_.functions[i].locals;
      std::sort(l.begin(), l.end());
      l.erase(std::unique(l.begin(), l.end()), l.end());
      for (auto& g : globals_[i]) {
        auto it = std::lower_bound(l.begin(), l.end(), g);
        if (it != l.end() && *it == g) l.erase(it);
      }
    }
  }

 private:
  static std::string_view field_name(TSTreeCursor& c) {
    const char* f = ts_tree_cursor_current_field_name(&c);
    return f ? std::string_view(f) : std::string_view();
  }

  // The frame of the node the cursor just moved to, from its parent's.
  void push(std::vector<Frame>& stack, TSTreeCursor& c) {
    const Frame& p = stack.back();
    Frame f;
    f.fn = p.fn;
    std::string_view fld = field_name(c);
    // An except clause's body is code again; only its exception types are muted.
    f.mute = p.mute || (p.mute_kids && !is(ts_tree_cursor_current_node(&c), "block"));
    f.raised = p.raise_kids && fld != "cause";
    f.guard = p.rest >= 0 ? p.rest : p.guard;
    f.type_only = p.type_only;
    if (p.truth != detail::Truth::unknown) arm_truth(p.truth, fld, f);
    if (p.yes >= 0) {
      if (p.ternary) {
        uint32_t at = ts_node_start_byte(ts_tree_cursor_current_node(&c));
        if (at < p.cond_start) f.guard = p.yes;
        else if (at >= p.cond_end) f.guard = p.no;
      } else if (fld == "consequence") {
        f.guard = p.yes;
      } else if (fld == "alternative") {
        f.guard = p.no;
      }
    }
    if (p.made_fn >= 0 && fld == "body") {
      f.fn = p.made_fn;
    } else if (p.made_cls >= 0 && fld == "body") {
      f.cls = p.made_cls;
      f.in_class_body = true;
    } else if (p.cls >= 0 && p.in_class_body) {
      // Statements of a class body: definitions there are methods.
      TSNode n = ts_tree_cursor_current_node(&c);
      std::string_view t = ts_node_type(n);
      if (t == "function_definition" || t == "decorated_definition" || t == "class_definition" ||
          t == "expression_statement" || t == "assignment" || t == "augmented_assignment") {
        f.cls = p.cls;
        f.in_class_body = t != "function_definition" && t != "class_definition";
      }
    }
    stack.push_back(f);
  }

  // An if's arm (`consequence`, or `alternative`: an elif or else) under a condition
  // known on Linux: not read when it cannot run; only for its imports under TYPE_CHECKING.
  static void arm_truth(detail::Truth t, std::string_view fld, Frame& f) {
    using detail::Truth;
    if (fld == "consequence") {
      f.dead = t == Truth::no;
      f.type_only = f.type_only || t == Truth::type_checking;
    } else if (fld == "alternative") {
      f.dead = t == Truth::yes;
      f.type_only = f.type_only || t == Truth::not_type_checking;
    }
  }

  // Code only a type checker reads runs nothing: its imports may still say what an
  // annotation names (bound after the module's own bindings, which win), the rest is
  // not read. Returns whether to walk the node's children.
  bool type_only(const Frame& f, TSNode n, std::string_view t) {
    if (t == "import_statement" || t == "import_from_statement") {
      deferring_ = true;
      if (t == "import_statement") import_statement(f, n);
      else import_from(f, n);
      deferring_ = false;
      return false;
    }
    return t != "function_definition" && t != "class_definition" && t != "decorated_definition";
  }

  std::string text(TSNode n) const { return std::string(python::ts::text(src_, n)); }

  // "a.b.c" for an identifier or a chain of attributes on one; "" otherwise.
  std::string dotted(TSNode n) const {
    if (is(n, "identifier")) return text(n);
    if (is(n, "attribute")) {
      std::string head = dotted(field(n, "object"));
      if (head.empty()) return "";
      return head + "." + text(field(n, "attribute"));
    }
    return "";
  }

  // `name.dunder` as a call Python makes without one written (Ref::implicit): the walk's
  // facts only, for a dotted name or a call's result.
  void implicit_ref(const Frame& f, TSNode value, const char* dunder) {
    if (!types_ || f.mute || f.fn == 0 || ts_node_is_null(value)) return;
    while (is(value, "parenthesized_expression") && python::ts::named_children(value).size() == 1)
      value = python::ts::named_children(value)[0];
    bool made = is(value, "call");
    std::string d = dotted(made ? field(value, "function") : value);
    if (d.empty() || d == "self" || d == "cls") return;
    add_ref(f.fn, value, d + "." + dunder, Ref::call, made);
    m_.functions[f.fn].refs.back().implicit = true;
  }

  void add_ref(int fn, TSNode at, std::string name, Ref::Kind kind, bool on_result = false) {
    TSPoint p = ts_node_start_point(at);
    auto& refs = m_.functions[fn].refs;
    Ref& r = refs.emplace_back();
    r.name = std::move(name);
    r.line = int(p.row) + 1;
    r.column = int(p.column) + 1;
    r.kind = kind;
    r.on_result = on_result;
    // A guard names parameters of the function whose code the node is, not of another
    // (a decorator's name is read in the enclosing scope but belongs to the function).
    if (fn == here_.fn && here_.guard > 0) r.guard = guards_[size_t(here_.guard)];
  }

  // `need_lock` or `not need_lock` where need_lock is a parameter of `fn`: "need_lock"
  // or "!need_lock"; "" for any other condition.
  std::string param_condition(int fn, TSNode c) const {
    bool negated = false;
    while (true) {
      if (is(c, "parenthesized_expression") && ts_node_named_child_count(c) == 1) c = ts_node_named_child(c, 0);
      else if (is(c, "not_operator")) {
        negated = !negated;
        c = field(c, "argument");
      } else break;
    }
    if (!is(c, "identifier") || fn == 0) return "";
    const auto& params = m_.functions[size_t(fn)].params;
    std::string name = text(c);
    if (std::find(params.begin(), params.end(), name) == params.end()) return "";
    return negated ? "!" + name : name;
  }

  int intern_guard(const std::string& g) {
    auto [it, added] = guard_ids_.emplace(g, int(guards_.size()));
    if (added) guards_.push_back(g);
    return it->second;
  }

  // The guards of the arms of an if, elif or ternary whose condition is a parameter.
  void arms(Frame& f, TSNode n, std::string_view t) {
    TSNode c;
    if (t == "conditional_expression") {
      if (ts_node_named_child_count(n) != 3) return;
      c = ts_node_named_child(n, 1);
      f.ternary = true;
    } else {
      c = field(n, "condition");
    }
    std::string cond = param_condition(f.fn, c);
    if (cond.empty()) return;
    std::string other = cond[0] == '!' ? cond.substr(1) : "!" + cond;
    std::string outer = guards_[size_t(f.guard)];  // a copy: interning grows guards_
    f.yes = intern_guard(outer.empty() ? cond : outer + " " + cond);
    f.no = intern_guard(outer.empty() ? other : outer + " " + other);
    f.cond_start = ts_node_start_byte(c);
    f.cond_end = ts_node_end_byte(c);
    // `if not verbose: return` with no else: the rest of the block runs only otherwise.
    if (t == "if_statement" && ts_node_is_null(field(n, "alternative")) && parent_ &&
        (is(ts_node_parent(n), "block") || is(ts_node_parent(n), "module")) && leaves(field(n, "consequence")))
      parent_->rest = f.no;
  }

  // A block whose last statement leaves it (return, raise, continue, break).
  static bool leaves(TSNode block) {
    uint32_t count = ts_node_named_child_count(block);
    for (uint32_t k = count; k-- > 0;) {
      TSNode last = ts_node_named_child(block, k);
      if (is(last, "comment")) continue;
      return is(last, "return_statement") || is(last, "raise_statement") || is(last, "continue_statement") ||
             is(last, "break_statement");
    }
    return false;
  }

  // A call's arguments that are a call of a name or a name (Ref::values).
  std::string argument_values(TSNode args) const {
    std::string out;
    int position = 0;
    auto of = [&](TSNode v) -> std::string {
      v = path_base(v);  // `base / "cache"` is what base is
      if (is(v, "call"))
        if (std::string d = dotted(field(v, "function")); !d.empty()) return "call:" + d;
      if (std::string d = dotted(v); !d.empty()) return "of:" + d;
      return "";
    };
    for (TSNode a : python::ts::named_children(args)) {
      if (is(a, "comment")) continue;
      if (is(a, "list_splat") || is(a, "dictionary_splat")) break;  // positions past it are not known
      std::string slot, v;
      if (is(a, "keyword_argument")) {
        slot = text(field(a, "name"));
        v = of(field(a, "value"));
      } else {
        slot = "#" + std::to_string(position++);
        v = of(a);
      }
      if (!v.empty()) out += (out.empty() ? "" : " ") + slot + "=" + v;
    }
    return out;
  }

  // A call's True/False/None arguments (Ref::literals).
  std::string literal_arguments(TSNode args) const {
    std::string out;
    int position = 0;
    bool spread = false;
    auto code = [](TSNode v) -> char {
      if (is(v, "true")) return 'T';
      if (is(v, "false")) return 'F';
      if (is(v, "none")) return 'N';
      return '?';
    };
    // Every argument is listed ('?' for a value not known here): one not listed is
    // left to its default.
    for (TSNode a : python::ts::named_children(args)) {
      if (is(a, "comment")) continue;
      if (is(a, "keyword_argument")) {
        out += (out.empty() ? "" : " ") + text(field(a, "name")) + "=" + code(field(a, "value"));
      } else if (is(a, "list_splat") || is(a, "dictionary_splat")) {
        spread = true;  // it may carry any parameter; positions past *args are not known
        if (is(a, "list_splat")) position = -1;
      } else if (position >= 0) {
        out += (out.empty() ? "#" : " #") + std::to_string(position) + "=" + code(a);
        ++position;
      }
    }
    if (spread) out += out.empty() ? "*" : " *";
    return out.empty() ? "-" : out;
  }

  void value(const Frame& f, TSNode n, bool stored = false) {
    if (f.mute) return;
    std::string d = dotted(n);
    if (d.empty()) return;
    add_ref(f.fn, n, std::move(d), Ref::value);
    m_.functions[f.fn].refs.back().stored = stored;
  }

  void read_attribute(const Frame& f, TSNode n) {
    value(f, n);
    mark_last_value(f, n, &Ref::read);
  }

  // Sets `flag` on the value ref value() just made for node n (none when it made none).
  void mark_last_value(const Frame& f, TSNode n, bool Ref::*flag) {
    auto& refs = m_.functions[f.fn].refs;
    if (!refs.empty() && refs.back().kind == Ref::value && refs.back().line == int(ts_node_start_point(n).row) + 1 &&
        refs.back().column == int(ts_node_start_point(n).column) + 1)
      refs.back().*flag = true;
  }

  void names_in(TSNode n, std::vector<std::string>& out) {
    if (ts_node_is_null(n)) return;
    std::string_view t = ts_node_type(n);
    if (t == "identifier") {
      out.push_back(text(n));
    } else if (t == "pattern_list" || t == "tuple_pattern" || t == "list_pattern" || t == "tuple" ||
               t == "list" || t == "parenthesized_expression" || t == "list_splat_pattern" ||
               t == "dictionary_splat_pattern" ||
               t == "as_pattern_target" || t == "expression_list") {
      for (TSNode k : python::ts::named_children(n)) names_in(k, out);
    }
  }

  void parameters(TSNode params, std::vector<std::string>& out, Function* fn = nullptr) {
    for (TSNode p : python::ts::named_children(params)) {
      std::string_view t = ts_node_type(p);
      if (t == "default_parameter" || t == "typed_default_parameter") {
        names_in(field(p, "name"), out);
        if (fn && is(field(p, "name"), "identifier")) {
          // `root: Path = ...` says what it holds; so does `root=Path.home()` when the
          // caller passes nothing (an argument of another kind is the caller's doing).
          std::string name = text(field(p, "name"));
          if (t == "typed_default_parameter") {
            typed(*fn, name, "type:", type_name(field(p, "type")));
            typed(*fn, name + "[]", "type:", element_type_name(field(p, "type")));
          }
          typed(*fn, name, "call:", made_or_literal(field(p, "value")));
          TSNode v = field(p, "value");
          if (is(v, "true") || is(v, "false") || is(v, "none"))
            fn->defaults[name] = is(v, "true") ? 'T' : is(v, "false") ? 'F' : 'N';
        }
      } else if (t == "typed_parameter") {
        auto kids = python::ts::named_children(p);  // the name (or *name, **name), then the type
        if (!kids.empty()) names_in(kids[0], out);
        if (fn && !kids.empty() && is(kids[0], "identifier")) {
          typed(*fn, text(kids[0]), "type:", type_name(field(p, "type")));
          typed(*fn, text(kids[0]) + "[]", "type:", element_type_name(field(p, "type")));
        }
      } else names_in(p, out);
    }
  }

  // An annotation as one dotted class name: quotes dropped, Optional[X], Union[X, None]
  // and X | None read as X. "" for anything else (a generic, a union of two classes).
  std::string type_name(TSNode type) const {
    if (ts_node_is_null(type)) return "";
    std::string t = text(type);
    std::string out;
    for (char c : t)
      if (c != ' ' && c != '\'' && c != '"' && c != '\n') out += c;
    for (const char* wrap : {"Optional[", "typing.Optional[", "Union[", "typing.Union["}) {
      std::string w = wrap;
      if (out.size() > w.size() && out.compare(0, w.size(), w) == 0 && out.back() == ']') {
        out = out.substr(w.size(), out.size() - w.size() - 1);
        break;
      }
    }
    std::string one;
    for (auto& part : util::split(out, out.find('|') != std::string::npos ? '|' : ',')) {
      if (part == "None") continue;
      if (!one.empty()) return "";
      one = part;
    }
    for (char c : one)
      if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.')) return "";
    return one;
  }

  // What each item of a container annotation holds: `List[Path]`, `Optional[list[Path]]`,
  // `Sequence[Path]`, `Tuple[Path, ...]` -> "Path"; "" for anything else.
  std::string element_type_name(TSNode type) const {
    if (ts_node_is_null(type)) return "";
    std::string out;
    for (char c : text(type))
      if (c != ' ' && c != '\'' && c != '"' && c != '\n') out += c;
    for (const char* wrap : {"Optional[", "typing.Optional["}) {
      std::string w = wrap;
      if (out.size() > w.size() && out.compare(0, w.size(), w) == 0 && out.back() == ']')
        out = out.substr(w.size(), out.size() - w.size() - 1);
    }
    for (const char* none : {"|None", "None|"})
      if (size_t at = out.find(none); at != std::string::npos) out.erase(at, 5);
    size_t open = out.find('[');
    if (open == std::string::npos || out.back() != ']') return "";
    std::string outer = out.substr(0, open);
    outer = outer.substr(outer.rfind('.') + 1);
    static const std::set<std::string> kContainers = {"List", "list", "Sequence", "MutableSequence", "Iterable",
                                                      "Iterator", "Collection", "Set", "set", "FrozenSet",
                                                      "frozenset", "Tuple", "tuple", "AbstractSet"};
    if (!kContainers.count(outer)) return "";
    std::string inner = out.substr(open + 1, out.size() - open - 2);
    std::string first = inner.substr(0, inner.find(','));
    if ((outer == "Tuple" || outer == "tuple") && inner != first && inner != first + ",...") return "";
    for (char c : first)
      if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.')) return "";
    return first;
  }

  // Records what `name` holds. A second, different assignment (a call or an expression)
  // is kept beside the first, "call:A|expr:b", up to three: the walk asks whether all
  // make the same class. Any other second one makes it unknown.
  static void typed(Function& fn, const std::string& name, const char* how, const std::string& what) {
    if (what.empty()) return;
    std::string v = how + what;
    auto [it, added] = fn.types.emplace(name, v);
    if (added || it->second == v || it->second.compare(0, 5, "type:") == 0) return;
    if (std::string(how) == "type:") {
      it->second = v;  // an annotation says more than an assignment
      return;
    }
    auto either = [](const std::string& h) { return h.compare(0, 5, "call:") == 0 || h.compare(0, 5, "expr:") == 0; };
    auto kept = util::split(it->second, '|');
    bool seen = std::find(kept.begin(), kept.end(), v) != kept.end();
    if (seen) return;
    if (!it->second.empty() && either(kept[0]) && either(v) && kept.size() < 3) it->second += "|" + v;
    else it->second.clear();
  }

  std::map<std::string, std::string>& imports_of(const Frame& f) { return m_.functions[f.fn].imports; }

  void bind(const Frame& f, std::string bound, std::string target) {
    if (target.empty()) return;
    if (deferring_) {
      deferred_.push_back({f.fn, std::move(bound), std::move(target)});
      return;
    }
    Function& F = m_.functions[f.fn];
    auto [it, added] = F.imports.emplace(bound, target);
    if (added || it->second == target) return;
    auto& others = F.other_imports[bound];  // try/except, if/else: every branch counts
    if (std::find(others.begin(), others.end(), target) == others.end()) others.push_back(std::move(target));
  }

  void import_statement(const Frame& f, TSNode n) {
    for (TSNode k : python::ts::named_children(n)) {
      if (is(k, "dotted_name")) {
        std::string mod = text(k);
        std::string head = mod.substr(0, mod.find('.'));
        bind(f, head, head);
      } else if (is(k, "aliased_import")) {
        bind(f, text(field(k, "alias")), text(field(k, "name")));
      }
    }
  }

  void import_from(const Frame& f, TSNode n) {
    TSNode modn = field(n, "module_name");
    std::string base;
    if (is(modn, "relative_import")) {
      int level = 0;
      std::string rest;
      for (TSNode k : python::ts::named_children(modn)) {
        if (is(k, "import_prefix")) level = int(ts_node_end_byte(k) - ts_node_start_byte(k));
        else if (is(k, "dotted_name")) rest = text(k);
      }
      base = absolute_module(m_.name, m_.is_package, level, rest);
      if (base.empty()) return;
    } else {
      base = text(modn);
    }
    TSTreeCursor c = ts_tree_cursor_new(n);
    if (ts_tree_cursor_goto_first_child(&c)) {
      do {
        TSNode k = ts_tree_cursor_current_node(&c);
        if (field_name(c) == "name") {
          if (is(k, "dotted_name")) bind(f, text(k), base + "." + text(k));
          else if (is(k, "aliased_import"))
            bind(f, text(field(k, "alias")), base + "." + text(field(k, "name")));
        } else if (is(k, "wildcard_import") && f.fn == 0 && !deferring_) {
          m_.stars.push_back(base);
        }
      } while (ts_tree_cursor_goto_next_sibling(&c));
    }
    ts_tree_cursor_delete(&c);
  }

  // `(Path(x) / "y")` is what Path(x) is (a path joined to more is a path): the
  // expression with parentheses and the left operands of `/` taken away.
  TSNode path_base(TSNode n) const {
    while (true) {
      if (is(n, "parenthesized_expression")) {
        auto kids = python::ts::named_children(n);
        if (kids.size() != 1) return n;
        n = kids[0];
      } else if (is(n, "binary_operator") && text(field(n, "operator")) == "/") {
        n = field(n, "left");
      } else {
        return n;
      }
    }
  }

  // `X(...)`, `(Path(x) / "y")`: the dotted name whose call makes the value, or "".
  std::string made_by(TSNode value) const {
    if (ts_node_is_null(value)) return "";
    TSNode base = path_base(value);
    return is(base, "call") ? dotted(field(base, "function")) : "";
  }

  // The builtin class a literal or comprehension makes (`flags = []`, `name = f"..."`),
  // or "": its methods are the builtin's (`flags.append`), which no code of the
  // environment defines.
  std::string literal_class(TSNode value) const {
    if (ts_node_is_null(value)) return "";
    std::string_view t = ts_node_type(value);
    if (t == "list" || t == "list_comprehension") return "list";
    if (t == "dictionary" || t == "dictionary_comprehension") return "dict";
    if (t == "set" || t == "set_comprehension") return "set";
    if (t == "tuple" || t == "expression_list") return "tuple";
    if (t == "binary_operator") {
      // `prefix + ".so"`, `"%s.so" % name`: a string literal on either side makes a str.
      std::string op = text(field(value, "operator"));
      if (op != "+" && op != "%") return "";
      std::string l = literal_class(field(value, "left")), r = literal_class(field(value, "right"));
      if (l == "str" || (op == "+" && r == "str")) return "str";
      return "";
    }
    if (t == "string" || t == "concatenated_string") {
      std::string_view s = python::ts::text(src_, value);
      size_t quote = s.find_first_of("'\"");
      bool bytes = s.substr(0, quote).find_first_of("bB") != std::string_view::npos;
      return bytes ? "bytes" : "str";
    }
    return "";
  }

  // What calling makes the value, or the builtin its literal makes.
  std::string made_or_literal(TSNode value) const {
    std::string made = made_by(value);
    return made.empty() ? literal_class(value) : made;
  }

  // What each item of a list, tuple or set literal (or comprehension) holds, when all
  // say the same: `[Path(a), Path(b)]`, `[Path(x) for x in xs]` -> "Path"; else "".
  std::string element_class(TSNode value) const {
    if (ts_node_is_null(value)) return "";
    std::string_view t = ts_node_type(value);
    if (t == "list_comprehension" || t == "set_comprehension" || t == "generator_expression")
      return made_or_literal(field(value, "body"));
    if (t != "list" && t != "tuple" && t != "set") return "";
    std::string common;
    for (TSNode k : python::ts::named_children(value)) {
      if (is(k, "comment")) continue;
      if (!alias_of(k).empty()) return "";  // functools.partial(f): a registry (items)
      std::string c = made_or_literal(k);
      if (c.empty() || (!common.empty() && c != common)) return "";
      common = c;
    }
    return common;
  }

  // Function::is_local before the locals are sorted (while extracting).
  static bool bound_here(const Function& F, const std::string& name) {
    return std::find(F.locals.begin(), F.locals.end(), name) != F.locals.end();
  }

  // The strings of a list, tuple or set of plain string literals (`("makedirs", "stat")`).
  std::vector<std::string> literal_strings(TSNode value) const {
    std::vector<std::string> out;
    if (ts_node_is_null(value) || !(is(value, "list") || is(value, "tuple") || is(value, "set"))) return out;
    for (TSNode k : python::ts::named_children(value)) {
      if (is(k, "comment")) continue;
      std::string s = text(k);
      if (!is(k, "string") || s.size() < 3 || (s[0] != '"' && s[0] != '\'') || s.back() != s[0]) return {};
      out.push_back(s.substr(1, s.size() - 2));
    }
    return out;
  }

  // The strings `name` holds in function `fn` or a scope around it (the top level
  // included), when a literal says so; empty otherwise.
  const std::vector<std::string>* strings_of(int fn, const std::string& name) const {
    for (int f = fn; f >= 0; f = f > 0 ? m_.functions[f].parent : -1) {
      const Function& F = m_.functions[f];
      if (auto it = F.strings.find(name); it != F.strings.end()) return &it->second;
      if (f > 0 && bound_here(F, name)) return nullptr;
    }
    return nullptr;
  }

  // What each item of `name` holds (its "name[]" type), in `fn` or a scope around it.
  std::string element_type(int fn, const std::string& name) const {
    for (int f = fn; f >= 0; f = f > 0 ? m_.functions[f].parent : -1) {
      const Function& F = m_.functions[f];
      if (auto it = F.types.find(name + "[]"); it != F.types.end()) return it->second;
      if (f > 0 && bound_here(F, name)) return "";
    }
    return "";
  }

  // `Path(x).resolve().parent`: a call of a dotted name, then methods called and
  // attributes read on what it made, spelled "Path().resolve().parent"; "" for any
  // other expression, or one longer than a few steps (the walk reads each in turn).
  std::string value_steps(TSNode n, int budget = 8) const {
    n = path_base(n);
    if (budget == 0) return "";
    // `tmp = path.parent / "x"`: a local (or parameter) is the head, its own type the start.
    if (is(n, "identifier")) return text(n);
    // `dirs[0].resolve()`: an item of a name, spelled "dirs[]" (its "dirs[]" type).
    if (is(n, "subscript") && is(field(n, "value"), "identifier")) return text(field(n, "value")) + "[]";
    if (is(n, "call")) {
      TSNode fn = field(n, "function");
      if (std::string d = dotted(fn); !d.empty()) return d + "()";
      if (!is(fn, "attribute")) return "";
      std::string inner = value_steps(field(fn, "object"), budget - 1);
      return inner.empty() ? "" : inner + "." + text(field(fn, "attribute")) + "()";
    }
    if (!is(n, "attribute")) return "";
    std::string inner = value_steps(field(n, "object"), budget - 1);
    return inner.empty() ? "" : inner + "." + text(field(n, "attribute"));
  }

  // "d.[]" for `d[k]` where d is a dotted name; "" otherwise.
  std::string item_of(TSNode n) const {
    if (!is(n, "subscript")) return "";
    std::string d = dotted(field(n, "value"));
    return d.empty() ? "" : d + ".[]";
  }

  // `getattr(x, "name")` -> "x.name", `getattr(x, name)` -> "x.[getattr]"; "" for
  // anything else (a default argument changes nothing: the attribute or not).
  std::string got_attribute(TSNode n) const {
    auto args = getattr_arguments(n);
    if (args.empty()) return "";
    std::string object = dotted(args[0]);
    if (object.empty()) return "";
    std::string literal = text(args[1]);
    if (is(args[1], "string") && literal.size() > 2 && (literal[0] == '"' || literal[0] == '\'')) {
      std::string name = literal.substr(1, literal.size() - 2);
      if (plain_name(name)) return object + "." + name;
    }
    return object + ".[getattr]";
  }

  // The arguments of `getattr(x, name[, default])`; empty for any other call.
  std::vector<TSNode> getattr_arguments(TSNode n) const {
    if (!is(n, "call") || dotted(field(n, "function")) != "getattr") return {};
    std::vector<TSNode> args;
    for (TSNode a : python::ts::named_children(field(n, "arguments")))
      if (!is(a, "comment")) args.push_back(a);
    if (args.size() < 2 || args.size() > 3) return {};
    return args;
  }

  static bool plain_name(const std::string& s) {
    return !s.empty() && !std::isdigit((unsigned char)s[0]) &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
  }

  // `getattr(m, name)` where name holds one of a few literal strings: "m.a", "m.b".
  std::vector<std::string> getattr_names(int fn, TSNode n) const {
    auto args = types_ ? getattr_arguments(n) : std::vector<TSNode>{};
    if (args.empty() || !is(args[1], "identifier")) return {};
    std::string object = dotted(args[0]);
    const auto* strings = object.empty() ? nullptr : strings_of(fn, text(args[1]));
    if (!strings) return {};
    std::vector<std::string> out;
    for (const auto& s : *strings) {
      if (!plain_name(s)) return {};
      out.push_back(object + "." + s);
    }
    return out;
  }

  // "a,b" when every item of a dict or list literal is a dotted name, else "".
  std::string items(TSNode n) const {
    bool dict = is(n, "dictionary");
    if (!dict && !is(n, "list")) return "";
    std::string out;
    for (TSNode k : python::ts::named_children(n)) {
      if (is(k, "comment")) continue;
      if (dict && !is(k, "pair")) return "";
      TSNode v = dict ? field(k, "value") : k;
      std::string d = dotted(v);
      if (d.empty()) d = alias_of(v);  // `functools.partial(f, ...)` calls f
      if (d.empty()) return "";
      out += (out.empty() ? "" : ",") + d;
    }
    return out;
  }

  // `g = f`, `g = functools.lru_cache(maxsize=None)(f)`, `g = functools.partial(f, 1)`.
  std::string alias_of(TSNode rhs) const {
    std::string d = dotted(rhs);
    if (!d.empty()) return d;
    if (!is(rhs, "call")) return "";
    TSNode fn = field(rhs, "function");
    std::string callee = dotted(fn);
    if (callee.empty() && is(fn, "call")) callee = dotted(field(fn, "function"));
    if (callee.empty() || !wraps_function(callee)) return "";
    for (TSNode a : python::ts::named_children(field(rhs, "arguments"))) return dotted(a);
    return "";
  }

  void call(Frame& f, TSNode n) {
    auto& refs = m_.functions[f.fn].refs;
    size_t before = refs.size();
    callee(f, n);
    if (!types_) return;
    for (size_t k = before; k < refs.size(); ++k) {
      if (refs[k].kind != Ref::call) continue;
      refs[k].literals = literal_arguments(field(n, "arguments"));
      refs[k].values = argument_values(field(n, "arguments"));
    }
  }

  // The ref a call makes: its callee as far as it has a name.
  void callee(Frame& f, TSNode n) {
    TSNode fn = field(n, "function");
    std::string name = dotted(fn);
    if (!name.empty()) {
      // isinstance(p, subprocess.Popen) checks a type; it makes nothing.
      if (name.size() == 10 && (name == "isinstance" || name == "issubclass")) f.mute_kids = true;
      add_ref(f.fn, n, std::move(name), Ref::call);
      m_.functions[f.fn].refs.back().raised = f.raised;
      return;
    }
    // `d[k]()`: an item of d called ("d.[]"), followed when d's items are known.
    if (std::string item = item_of(fn); !item.empty()) return add_ref(f.fn, n, item, Ref::call);
    // `for name in ("a", "b"): getattr(m, name)()` calls m.a and m.b.
    if (auto names = getattr_names(f.fn, fn); !names.empty()) {
      for (const auto& name : names) add_ref(f.fn, n, name, Ref::call);
      return;
    }
    // `getattr(m, "name")()` is `m.name()`; `getattr(m, name)()` any attribute of m
    // ("m.[getattr]"), followed to each function when m is a module.
    if (std::string got = got_attribute(fn); !got.empty()) return add_ref(f.fn, n, got, Ref::call);
    // `X(...).m()`: a method of what X returns (a class: its instance).
    if (is(fn, "attribute")) {
      TSNode obj = field(fn, "object");
      std::string attr = text(field(fn, "attribute"));
      obj = path_base(obj);
      if (is(obj, "call")) {
        std::string inner = dotted(field(obj, "function"));
        if (inner.empty()) inner = item_of(field(obj, "function"));
        if (!inner.empty()) {
          add_ref(f.fn, n, inner + "." + attr, Ref::call, true);
          return;
        }
      }
      // `Path(x).resolve().exists()`, `Spec().paths.root.mkdir()`: the method of what
      // the steps before it give (a scan does not infer values: a dynamic call to it).
      // `(p / "y").exists()` with no call in it: the method of what p holds.
      if (std::string steps = types_ ? value_steps(obj) : ""; !steps.empty())
        return add_ref(f.fn, n, steps + "." + attr, Ref::call, steps.find("()") != std::string::npos);
      std::string_view t = ts_node_type(obj);
      if (t == "string" || t == "concatenated_string") return add_ref(f.fn, n, "str." + attr, Ref::call);
      if (t == "list" || t == "list_comprehension") return add_ref(f.fn, n, "list." + attr, Ref::call);
      if (t == "dictionary" || t == "dictionary_comprehension") return add_ref(f.fn, n, "dict." + attr, Ref::call);
    }
    std::string what = text(fn);
    what = what.substr(0, what.find('\n'));
    if (what.size() > 60) what = what.substr(0, 57) + "...";
    add_ref(f.fn, n, what, Ref::dynamic);
  }

  // An attribute read in a condition, a comparison, a boolean or arithmetic operand, an
  // f-string or an assert (`if self.is_built:`): a property runs there as it does on
  // the right of `=` (types_ only: the walk's).
  void attribute_reads(const Frame& f, TSNode n) {
    if (!types_ || f.mute) return;
    for (TSNode k : python::ts::named_children(n))
      if (is(k, "attribute")) read_attribute(f, k);
  }

  static bool reads_operands(std::string_view t) {
    return t == "comparison_operator" || t == "boolean_operator" || t == "binary_operator" ||
           t == "not_operator" || t == "unary_operator" || t == "interpolation" || t == "conditional_expression" ||
           t == "assert_statement" || t == "parenthesized_expression";
  }

  // Returns whether to walk the node's children.
  bool enter(Frame& f, TSNode n) {
    if (f.dead) return false;
    here_ = f;
    std::string_view t = ts_node_type(n);
    if (f.type_only) return type_only(f, n, t);
    if (t == "if_statement" || t == "elif_clause") f.truth = detail::static_truth(src_, field(n, "condition"));
    if (reads_operands(t)) attribute_reads(f, n);
    else if (t == "if_statement" || t == "elif_clause" || t == "while_statement") condition(f, n);
    implicit_calls(f, n, t);
    if (types_ && f.fn > 0 && (t == "if_statement" || t == "elif_clause" || t == "conditional_expression"))
      arms(f, n, t);
    switch (t[0]) {
      case 'c':
        if (t == "call") call(f, n);
        else if (t == "class_definition") class_definition(f, n);
        else if (t == "comment" || t == "concatenated_string") return t != "comment";
        return true;
      case 'f':
        if (t == "function_definition") function_definition(f, n);
        else if (t == "for_statement" || t == "for_in_clause") loop(f, n);
        else if (t == "future_import_statement") return false;
        return true;
      case 'i':
        if (t == "import_statement") import_statement(f, n);
        else if (t == "import_from_statement") import_from(f, n);
        else if (t == "identifier" || t == "integer") return false;
        else return true;
        return false;
      case 'd':
        if (t == "decorated_definition") decorated(n);
        return true;
      case 'a':
        if (t == "assignment") assignment(f, n);
        else if (t == "augmented_assignment" && !f.in_class_body) {
          names_in(field(n, "left"), locals(f));
          if (f.fn == 0 && text(field(n, "left")) == "__all__") exports(field(n, "right"), true);
        }
        else if (t == "argument_list") arguments(f, n);
        else if (t == "as_pattern") names_in(field(n, "alias"), locals(f));
        return true;
      case 'e':
        if (t == "except_clause" || t == "except_group_clause") {
          names_in(field(n, "alias"), locals(f));
          f.mute_kids = true;
        }
        return true;
      case 'E':  // tree-sitter's node types are lower case but this one
        if (t == "ERROR") ++m_.syntax_errors;
        return true;
      case 'n':
        if (t == "named_expression") names_in(field(n, "name"), locals(f));
        else if (t == "nonlocal_statement") return false;
        return true;
      case 'g':
        if (t == "global_statement") {
          for (TSNode k : python::ts::named_children(n)) globals_[f.fn].insert(text(k));
          return false;
        }
        return true;
      case 'l':
        if (t == "lambda") parameters(field(n, "parameters"), locals(f));
        else if (t == "list") elements(f, n);
        return true;
      case 'r':
        if (t == "return_statement") {
          if (types_ && f.fn > 0) note_return(f.fn, n);
          for (TSNode k : python::ts::named_children(n)) {
            if (is(k, "expression_list")) elements(f, k);
            else value(f, k);
          }
        } else if (t == "raise_statement") {
          f.raise_kids = true;
        }
        return true;
      case 't':
        if (t == "tuple") elements(f, n);
        else if (t == "type") f.mute_kids = true;  // an annotation names types, it runs nothing
        return true;
      case 'w':
        if (t == "with_item") with_item(f, n);
        return true;
      case 's':
        if (t == "set") elements(f, n);
        return true;
      case 'p':
        if (t == "pair") value(f, field(n, "value"));
        return true;
      default:
        return true;
    }
  }

  std::vector<std::string>& locals(const Frame& f) { return m_.functions[f.fn].locals; }

  void elements(const Frame& f, TSNode n) {
    for (TSNode k : python::ts::named_children(n)) value(f, k);
  }

  void arguments(const Frame& f, TSNode n) {
    if (f.mute) return;
    bool spawns = starts_elsewhere(ts_node_parent(n));
    for (TSNode k : python::ts::named_children(n)) {
      if (!is(k, "keyword_argument")) {
        value(f, k);
        continue;
      }
      TSNode v = field(k, "value");
      value(f, v);
      // `Process(target=work)`: work runs in the child process (or thread), not here.
      if (spawns && text(field(k, "name")) == "target") mark_last_value(f, v, &Ref::escapes);
    }
  }

  // A call making a process or a thread (multiprocessing's Process, a context's, threading.Thread).
  bool starts_elsewhere(TSNode call) const {
    if (!is(call, "call")) return false;
    std::string d = dotted(field(call, "function"));
    std::string last = d.substr(d.rfind('.') + 1);
    return last == "Process" || last == "Thread" || util::ends_with(last, "Process");
  }

  // `if self.is_built:` reads a property; `if x:` runs x.__bool__.
  void condition(const Frame& f, TSNode n) {
    TSNode c = field(n, "condition");
    if (is(c, "attribute") && types_ && !f.mute) read_attribute(f, c);
    implicit_ref(f, c, "__bool__");
  }

  // `for x in ...`: x is a local; `for fn in REGISTRY:` makes fn each item of what
  // REGISTRY holds.
  void loop(const Frame& f, TSNode n) {
    names_in(field(n, "left"), locals(f));
    TSNode left = field(n, "left"), right = field(n, "right");
    if (!types_ || f.fn == 0 || !is(left, "identifier")) return;
    Function& F = m_.functions[f.fn];
    std::string name = text(left), over = dotted(right);
    // `for d in [Path(a), Path(b)]` or over a name whose items the code shows.
    std::string each = element_class(right);
    if (!each.empty()) typed(F, name, "call:", each);
    else if (std::string how = is(right, "identifier") ? element_type(f.fn, over) : ""; !how.empty()) typed(F, name, "", how);
    else typed(F, name, "each:", over);
    auto strings = literal_strings(right);
    if (strings.empty() && is(right, "identifier"))
      if (auto* known = strings_of(f.fn, over)) strings = *known;
    if (!strings.empty()) F.strings[name] = std::move(strings);
  }

  // The special methods an operator runs: `not x`, `x and y` (__bool__), `for _ in x`
  // (__iter__), `x[k]` read (__getitem__), `x + y` (__add__).
  void implicit_calls(const Frame& f, TSNode n, std::string_view t) {
    if (!types_ || f.mute || f.fn == 0) return;
    if (t == "not_operator") implicit_ref(f, field(n, "argument"), "__bool__");
    else if (t == "boolean_operator") {
      implicit_ref(f, field(n, "left"), "__bool__");
      implicit_ref(f, field(n, "right"), "__bool__");
    } else if (t == "for_statement") {
      implicit_ref(f, field(n, "right"), "__iter__");
    } else if (t == "subscript" && !is(ts_node_parent(n), "assignment")) {
      implicit_ref(f, field(n, "value"), "__getitem__");
    } else if (t == "binary_operator" && text(field(n, "operator")) == "+") {
      implicit_ref(f, field(n, "left"), "__add__");
    }
  }

  // `with lock:` enters what the name holds; `with X(...)` is a call (read as such)
  // and then X's __enter__ (and at the end its __exit__).
  void with_item(const Frame& f, TSNode n) {
    TSNode v = field(n, "value");
    if (is(v, "as_pattern")) {
      auto kids = python::ts::named_children(v);
      if (kids.empty()) return;
      v = kids[0];
    }
    if (is(v, "call")) {
      std::string callee = dotted(field(v, "function"));
      if (!callee.empty()) add_ref(f.fn, v, callee + ".__enter__", Ref::call, true);
      implicit_ref(f, v, "__exit__");
      return;
    }
    std::string d = dotted(v);
    if (!d.empty()) add_ref(f.fn, v, std::move(d), Ref::entered);
  }

  void assignment(const Frame& f, TSNode n) {
    TSNode left = field(n, "left"), right = field(n, "right");
    if (f.in_class_body) {
      if (types_) class_attribute(f, n, left, right);
      return;
    }
    names_in(left, locals(f));
    if (types_) assigned_type(f, n, left, right);
    if (f.fn == 0 && is(left, "identifier") && text(left) == "__all__") exports(right, false);
    if (ts_node_is_null(right)) return;
    value(f, right, true);
    if (is(left, "subscript") || is(left, "attribute")) mark_last_value(f, right, &Ref::escapes);
    if (f.fn == 0 && is(left, "identifier")) {
      // `xrange = xrange` (a Python 2 branch) names nothing new; `xrange = range` may follow.
      std::string a = alias_of(right), name = text(left);
      if (!a.empty() && a != name) m_.aliases.emplace(std::move(name), a);
    }
  }

  // `__all__ = [...]` (or `+= [...]`): the names a star import of this module binds;
  // anything but string literals makes them unknown.
  void exports(TSNode value, bool more) {
    if (m_.exports == ModuleFacts::Exports::unknown) return;
    if (!more) m_.all.clear();
    bool literal = !ts_node_is_null(value) && (is(value, "list") || is(value, "tuple"));
    for (TSNode k : literal ? python::ts::named_children(value) : std::vector<TSNode>{}) {
      if (is(k, "comment")) continue;
      std::string s = text(k);
      if (!is(k, "string") || s.size() < 3 || (s[0] != '"' && s[0] != '\'') || s.back() != s[0]) {
        literal = false;
        break;
      }
      m_.all.push_back(s.substr(1, s.size() - 2));
    }
    m_.exports = literal ? ModuleFacts::Exports::listed : ModuleFacts::Exports::unknown;
  }

  // What `left = right` (or `left: T = right`) tells of the value left holds.
  void assigned_type(const Frame& f, TSNode n, TSNode left, TSNode right) {
    std::string made = made_by(right);  // `x = X(...)`: x holds what calling X makes
    Function& F = m_.functions[f.fn];
    if (is(left, "identifier")) {
      std::string name = text(left);
      typed(F, name, "type:", type_name(field(n, "type")));
      typed(F, name + "[]", "type:", element_type_name(field(n, "type")));
      typed(F, name, "call:", made);
      if (made.empty()) {
        // A dict or list of functions is read as its items (`d[k]()`); any other
        // literal as the builtin it makes.
        std::string its = items(right);
        typed(F, name, "items:", its);
        if (its.empty()) typed(F, name, "call:", literal_class(right));
        if (is(right, "conditional_expression") && ts_node_named_child_count(right) == 3) {
          // `opener = gzip.open if compressed else open`: either arm.
          for (uint32_t arm : {0u, 2u}) {
            TSNode a = ts_node_named_child(right, arm);
            std::string arm_made = made_by(a);
            if (!arm_made.empty()) typed(F, name, "call:", arm_made);
            else typed(F, name, "expr:", value_steps(a));
          }
        } else if (!ts_node_is_null(right)) {
          typed(F, name, "expr:", value_steps(right));
        }
        typed(F, name + "[]", "call:", element_class(right));
        if (auto strings = literal_strings(right); !strings.empty()) F.strings[name] = std::move(strings);
      }
    } else if (is(left, "attribute") && F.cls >= 0 && !F.self_name.empty() &&
               dotted(field(left, "object")) == F.self_name) {
      self_attribute(f, n, text(field(left, "attribute")), right, made.empty() ? literal_class(right) : made);
    }
  }

  // `self.x = X(...)`, `self.x: X = ...`, or `self.x = spec` where the method knows
  // what its local `spec` holds (`def __init__(self, spec: JitSpec)`).
  void self_attribute(const Frame& f, TSNode n, const std::string& attr, TSNode right, const std::string& made) {
    Function& F = m_.functions[f.fn];
    std::string how;
    if (std::string t = type_name(field(n, "type")); !t.empty()) how = "type:" + t;
    else if (!made.empty()) how = "call:" + made;
    else if (is(right, "identifier")) {
      auto ty = F.types.find(text(right));
      bool named = ty != F.types.end() && (util::starts_with(ty->second, "call:") || util::starts_with(ty->second, "type:"));
      if (named) how = ty->second;
    }
    if (how.size() > 5) attribute_holds(F.cls, attr, f.fn, how);
  }

  // `x: X` or `x = X(...)` in a class body: what its instances' x holds, read in the
  // scope the class is defined in.
  void class_attribute(const Frame& f, TSNode n, TSNode left, TSNode right) {
    if (!is(left, "identifier") || f.cls < 0) return;
    std::string how;
    if (std::string t = type_name(field(n, "type")); !t.empty()) how = "type:" + t;
    else if (std::string made = made_or_literal(right); !made.empty()) how = "call:" + made;
    if (!how.empty()) attribute_holds(f.cls, text(left), f.fn, how);
  }

  // Each different thing the code says an attribute holds, in source order, a few at most.
  void attribute_holds(int cls, const std::string& attr, int fn, const std::string& how) {
    auto& held = m_.classes[cls].attr_types[attr];
    bool known = std::any_of(held.begin(), held.end(), [&](const auto& h) { return h.second == how; });
    if (!known && held.size() < Class::kMaxAttrTypes) held.emplace_back(fn, how);
  }

  void decorated(TSNode n) {
    decorators_.clear();
    for (TSNode k : python::ts::named_children(n)) {
      if (!is(k, "decorator")) continue;
      auto kids = python::ts::named_children(k);
      if (kids.empty()) continue;
      TSNode e = kids[0];
      std::string name = is(e, "call") ? dotted(field(e, "function")) : dotted(e);
      if (!name.empty()) decorators_.push_back({name, e});
    }
  }

  void function_definition(Frame& f, TSNode n) {
    std::string name = text(field(n, "name"));
    int k = int(m_.functions.size());
    m_.functions.emplace_back();
    Function& fn = m_.functions.back();
    fn.line = python::ts::line(n);
    fn.end_line = int(ts_node_end_point(n).row) + 1;
    fn.parent = f.fn;
    // Decorators belong to this definition only when they sit right before it.
    bool mine = is(ts_node_parent(n), "decorated_definition");
    for (auto& [dname, node] : mine ? decorators_ : std::vector<std::pair<std::string, TSNode>>{})
      if (dname == "overload" || util::ends_with(dname, ".overload")) fn.overload = true;
    // The implementation beside @overload signatures is what runs, wherever it sits.
    auto define = [&](std::map<std::string, int>& where) {
      auto [it, added] = where.emplace(name, k);
      if (!added && !(fn.overload && !m_.functions[size_t(it->second)].overload)) it->second = k;
    };
    if (f.cls >= 0) {
      Class& c = m_.classes[f.cls];
      fn.qualified = c.qualified + "." + name;
      fn.cls = f.cls;
      define(c.methods);
    } else {
      const std::string& outer = m_.functions[f.fn].qualified;
      fn.qualified = outer.empty() ? name : outer + "." + name;
      define(m_.functions[f.fn].defs);
    }
    parameters(field(n, "parameters"), fn.locals, types_ ? &fn : nullptr);
    if (types_) fn.params = fn.locals;
    if (types_) fn.returns = type_name(field(n, "return_type"));
    bool is_static = false;
    for (auto& [dname, node] : mine ? decorators_ : std::vector<std::pair<std::string, TSNode>>{}) {
      if (dname == "staticmethod") is_static = true;
      if (dname == "property" || dname == "cached_property" || dname == "functools.cached_property")
        fn.is_property = true;
      if (util::ends_with(dname, "abstractmethod") || util::ends_with(dname, "abstractproperty")) fn.abstract = true;
      add_ref(k, node, dname, Ref::decorator);
    }
    if (mine) decorators_.clear();
    if (fn.cls >= 0 && !fn.abstract && !fn.overload) {
      // `...` alone is also how a plain class spells a method that does nothing; it is
      // abstract in an abc.ABC or a typing.Protocol. `raise NotImplementedError` is always.
      int stub = stub_body(field(n, "body"));
      fn.abstract = stub == 1 || (stub == 2 && abstract_class(m_.classes[size_t(f.cls)]));
    }
    if (fn.cls >= 0 && !is_static && !fn.locals.empty()) {
      // The first parameter, in source order: parameters() keeps that order.
      fn.self_name = fn.locals.front();
    }
    f.made_fn = k;
  }

  static bool abstract_class(const Class& c) {
    return std::any_of(c.bases.begin(), c.bases.end(), [](const std::string& b) {
      std::string last = b.substr(b.rfind('.') + 1);
      return last == "ABC" || last == "Protocol";
    });
  }

  // 1: a body that is only `raise NotImplementedError` (after a docstring); 2: only
  // `...`; 0: anything else.
  int stub_body(TSNode body) const {
    auto stmts = python::ts::named_children(body);
    size_t k = 0;
    while (k < stmts.size() && is(stmts[k], "comment")) ++k;
    if (k < stmts.size() && is(stmts[k], "expression_statement")) {
      auto kids = python::ts::named_children(stmts[k]);
      if (kids.size() == 1 && is(kids[0], "string") && k + 1 < stmts.size()) ++k;  // the docstring
    }
    while (k < stmts.size() && is(stmts[k], "comment")) ++k;
    if (k + 1 != stmts.size()) return 0;
    TSNode s = stmts[k];
    if (is(s, "raise_statement")) return util::starts_with(text(s), "raise NotImplementedError") ? 1 : 0;
    if (!is(s, "expression_statement")) return 0;
    auto kids = python::ts::named_children(s);
    return kids.size() == 1 && is(kids[0], "ellipsis") ? 2 : 0;
  }

  void class_definition(Frame& f, TSNode n) {
    std::string name = text(field(n, "name"));
    Class c;
    c.line = python::ts::line(n);
    c.scope = f.fn;
    if (f.cls >= 0) c.qualified = m_.classes[f.cls].qualified + "." + name;
    else {
      const std::string& outer = m_.functions[f.fn].qualified;
      c.qualified = outer.empty() ? name : outer + "." + name;
    }
    for (TSNode b : python::ts::named_children(field(n, "superclasses"))) {
      std::string d = dotted(b);
      if (!d.empty()) c.bases.push_back(d);
    }
    int k = int(m_.classes.size());
    if (f.fn == 0 && f.cls < 0) m_.class_names[name] = k;
    else if (f.cls < 0) m_.functions[f.fn].locals.push_back(name);
    m_.classes.push_back(std::move(c));
    if (is(ts_node_parent(n), "decorated_definition")) decorators_.clear();
    f.made_cls = k;
  }

  // What one `return` of function `fn` makes: the callee of `return X(...)`; anything
  // else but a bare return or `return None` makes the function's result unknown.
  void note_return(int fn, TSNode n) {
    auto kids = python::ts::named_children(n);
    std::string made;
    if (kids.empty() || (kids.size() == 1 && is(kids[0], "none"))) return;
    if (kids.size() == 1 && is(kids[0], "call")) made = dotted(field(kids[0], "function"));
    std::string& was = returned_[fn];
    if (made.empty()) was = kMixed;
    else if (was.empty()) was = made;
    else if (was != made) was = kMixed;
  }

  static constexpr const char* kMixed = "\x01";  // two different results: none inferred
  std::map<int, std::string> returned_;  // function -> what its returns make so far
  std::string_view src_;
  bool types_;  // what values hold (Function::types, returns, ...): the walk's, not a scan's
  ModuleFacts& m_;
  std::vector<std::pair<std::string, TSNode>> decorators_;
  std::map<int, std::set<std::string>> globals_;
  std::vector<std::string> guards_{""};  // Ref::guard texts; [0] is none
  std::map<std::string, int> guard_ids_{{"", 0}};
  Frame here_;  // the frame of the node enter() reads (add_ref takes its guard)
  // Imports only a type checker reads (`if TYPE_CHECKING:`), bound by finish() where
  // nothing else binds the name: function, name, what it names.
  bool deferring_ = false;
  std::vector<std::tuple<int, std::string, std::string>> deferred_;
  Frame* parent_ = nullptr;  // its parent's frame (an early return guards the rest of it)
};

}  // namespace

bool Function::is_local(const std::string& name) const {
  return std::binary_search(locals.begin(), locals.end(), name);
}

std::string absolute_module(const std::string& module, bool is_package, int level, const std::string& rest) {
  if (level == 0) return rest;
  auto parts = util::split(module, '.');
  if (!is_package && !parts.empty()) parts.pop_back();
  for (int i = 1; i < level; ++i) {
    if (parts.empty()) return "";
    parts.pop_back();
  }
  if (parts.empty()) return "";
  std::string base = util::join(parts, ".");
  return rest.empty() ? base : base + "." + rest;
}

ModuleFacts extract(std::string_view source, const std::string& module, bool is_package, bool types) {
  ModuleFacts m;
  m.name = module;
  m.is_package = is_package;
  m.typed = types;
  Extractor x(source, m, types);
  {
    python::ts::Tree tree(source, module);
    x.run(tree.root());
  }
  x.finish();
  return m;
}

namespace detail {

// A block whose tree is worth handing back to the system once freed (tens of MB).
constexpr uint32_t kLargeBlock = 64 * 1024;

ModuleFacts extract_blocks(std::string_view source, const std::string& module, bool is_package,
                           const std::vector<Block>& blocks, util::ByteBudget* budget, bool& damaged,
                           bool types) {
  ModuleFacts m;
  m.name = module;
  m.is_package = is_package;
  m.typed = types;
  Extractor x(source, m, types);
  damaged = false;
  for (const Block& b : blocks) {
    TSRange r{{b.row, 0}, {b.end_row, b.end_column}, b.begin, b.end};
    // The tree is what costs memory (about a hundred times the text): one block's at
    // a time here, and across threads no more than the budget allows.
    util::ByteBudget::Lease lease = budget ? budget->take(b.end - b.begin) : util::ByteBudget::Lease{};
    {
      python::ts::Tree tree(source, r, module);
      damaged = damaged || ts_node_has_error(tree.root());
      x.run(tree.root());
    }
    if (b.end - b.begin >= kLargeBlock) util::return_freed_memory();
  }
  x.finish();
  return m;
}

}  // namespace detail

}  // namespace sitepatch::audit
