// What names are bound to and what values hold: see extractor.hpp.
#include <algorithm>

#include "audit/extractor.hpp"
#include "python/tree.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::detail {

using python::ts::field;
using python::ts::is;

void Extractor::names_in(TSNode n, std::vector<std::string>& out) {
  // Patterns nest as deep as the text's brackets do: a stack of nodes, not recursion,
  // holding each one's children last first so the names come out in order.
  std::vector<TSNode> todo{n};
  while (!todo.empty()) {
    n = todo.back();
    todo.pop_back();
    if (ts_node_is_null(n)) continue;
    std::string_view t = ts_node_type(n);
    if (t == "identifier") {
      out.push_back(text(n));
    } else if (t == "pattern_list" || t == "tuple_pattern" || t == "list_pattern" || t == "tuple" ||
               t == "list" || t == "parenthesized_expression" || t == "list_splat_pattern" ||
               t == "dictionary_splat_pattern" || t == "as_pattern_target" || t == "expression_list") {
      auto kids = python::ts::named_children(n);
      todo.insert(todo.end(), kids.rbegin(), kids.rend());
    }
  }
}

void Extractor::parameters(TSNode params, std::vector<std::string>& out, Function* fn) {
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

void Extractor::typed(Function& fn, const std::string& name, const char* how, const std::string& what) {
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

void Extractor::bind(const Frame& f, std::string bound, std::string target) {
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

void Extractor::import_statement(const Frame& f, TSNode n) {
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

void Extractor::import_from(const Frame& f, TSNode n) {
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

bool Extractor::bound_here(const Function& F, const std::string& name) {
  return std::find(F.locals.begin(), F.locals.end(), name) != F.locals.end();
}

const std::vector<std::string>* Extractor::strings_of(int fn, const std::string& name) const {
  for (int f = fn; f >= 0; f = f > 0 ? m_.functions[f].parent : -1) {
    const Function& F = m_.functions[f];
    if (auto it = F.strings.find(name); it != F.strings.end()) return &it->second;
    if (f > 0 && bound_here(F, name)) return nullptr;
  }
  return nullptr;
}

std::string Extractor::element_type(int fn, const std::string& name) const {
  for (int f = fn; f >= 0; f = f > 0 ? m_.functions[f].parent : -1) {
    const Function& F = m_.functions[f];
    if (auto it = F.types.find(name + "[]"); it != F.types.end()) return it->second;
    if (f > 0 && bound_here(F, name)) return "";
  }
  return "";
}

std::vector<std::string> Extractor::getattr_names(int fn, TSNode n) const {
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

void Extractor::assignment(const Frame& f, TSNode n) {
  TSNode left = field(n, "left"), right = field(n, "right");
  if (f.in_class_body) {
    if (types_) class_attribute(f, n, left, right);
    return;
  }
  names_in(left, locals(f));
  if (types_) assigned_type(f, n, left, right);
  if (f.fn == 0 && is(left, "identifier") && text(left) == "__all__") exports(right, false);
  if (ts_node_is_null(right)) return;
  if (is(left, "identifier")) detail::learn(src_, text(left), right, known(f.fn), known_[f.fn]);
  value(f, right, true);
  if (f.fn == 0 && is(left, "identifier")) {
    // `xrange = xrange` (a Python 2 branch) names nothing new; `xrange = range` may follow.
    std::string a = alias_of(right), name = text(left);
    if (!a.empty() && a != name) m_.aliases.emplace(std::move(name), a);
  }
}

void Extractor::exports(TSNode value, bool more) {
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

void Extractor::assigned_type(const Frame& f, TSNode n, TSNode left, TSNode right) {
  std::string made = made_by(right);  // `x = X(...)`: x holds what calling X makes
  Function& F = m_.functions[f.fn];
  if (std::string got = got_attribute(right); is(left, "identifier") && util::ends_with(got, ".[getattr]")) {
    // `device_module = getattr(torch, backend_name)`: a submodule picked at run time.
    typed(F, text(left), "attr:", got.substr(0, got.size() - std::string(".[getattr]").size()));
    return;
  }
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

void Extractor::self_attribute(const Frame& f, TSNode n, const std::string& attr, TSNode right, const std::string& made) {
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

void Extractor::class_attribute(const Frame& f, TSNode n, TSNode left, TSNode right) {
  if (!is(left, "identifier") || f.cls < 0) return;
  std::string how;
  if (std::string t = type_name(field(n, "type")); !t.empty()) how = "type:" + t;
  else if (std::string made = made_or_literal(right); !made.empty()) how = "call:" + made;
  if (!how.empty()) attribute_holds(f.cls, text(left), f.fn, how);
}

void Extractor::attribute_holds(int cls, const std::string& attr, int fn, const std::string& how) {
  auto& held = m_.classes[cls].attr_types[attr];
  bool known = std::any_of(held.begin(), held.end(), [&](const auto& h) { return h.second == how; });
  if (!known && held.size() < Class::kMaxAttrTypes) held.emplace_back(fn, how);
}

void Extractor::decorated(TSNode n) {
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

void Extractor::function_definition(Frame& f, TSNode n) {
  std::string name = text(field(n, "name"));
  int k = int(m_.functions.size());
  m_.functions.emplace_back();
  Function& fn = m_.functions.back();
  fn.line = python::ts::line(n);
  fn.end_line = int(ts_node_end_point(n).row) + 1;
  fn.parent = f.fn;
  // Decorators belong to this definition only when they sit right before it.
  bool mine = is(parent_node(), "decorated_definition");
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
  if (types_) fn.returns = type_name(field(n, "return_type"), true);
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

bool Extractor::abstract_class(const Class& c) {
  return std::any_of(c.bases.begin(), c.bases.end(), [](const std::string& b) {
    std::string last = b.substr(b.rfind('.') + 1);
    return last == "ABC" || last == "Protocol";
  });
}

int Extractor::stub_body(TSNode body) const {
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

void Extractor::class_definition(Frame& f, TSNode n) {
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
  if (is(parent_node(), "decorated_definition")) decorators_.clear();
  f.made_cls = k;
}

void Extractor::note_return(int fn, TSNode n) {
  auto kids = python::ts::named_children(n);
  std::string made;
  if (kids.empty() || (kids.size() == 1 && is(kids[0], "none"))) return;
  if (kids.size() == 1 && is(kids[0], "call")) made = dotted(field(kids[0], "function"));
  std::string& was = returned_[fn];
  if (made.empty()) was = kMixed;
  else if (was.empty()) was = made;
  else if (was != made) was = kMixed;
}

}  // namespace sitepatch::audit::detail
