// Lowering, part three: what binds names without an `=`: def (a scope, its parameters
// and their defaults, its decorators applied bottom up: the name holds what the last one
// returns), class (its body lowered in the scope around it, each name a class attribute),
// and imports (a module value by name: nothing is loaded until the solver reads from it).
#include "audit/flow/lowerer.hpp"
#include "sitepatch/audit/facts.hpp"

namespace sitepatch::audit::flow::detail {

using python::ts::field;
using python::ts::is;
using python::ts::named_children;

namespace {

bool has_child(TSNode n, std::string_view type) {
  for (uint32_t k = 0; k < ts_node_child_count(n); ++k)
    if (is(ts_node_child(n, k), type)) return true;
  return false;
}

}  // namespace

void Lowerer::params(TSNode list, Scope& s, ScopeState& st) {
  bool keyword_only = false;
  for (TSNode p : named_children(list)) {
    Param param;
    TSNode name = p;
    TSNode def{};
    TSNode type{};
    if (is(p, "default_parameter") || is(p, "typed_default_parameter")) {
      name = field(p, "name");
      def = field(p, "value");
      type = field(p, "type");
    } else if (is(p, "typed_parameter")) {
      name = named_children(p).at(0);
      type = field(p, "type");
    }
    if (is(name, "list_splat_pattern") || is(name, "dictionary_splat_pattern")) {
      param.kind = is(name, "list_splat_pattern") ? Param::star : Param::star_star;
      auto kids = named_children(name);
      if (kids.empty()) continue;
      name = kids[0];
      keyword_only = true;
    } else if (is(p, "keyword_separator")) {
      keyword_only = true;
      continue;
    } else if (is(p, "positional_separator")) {
      continue;
    } else if (keyword_only) {
      param.kind = Param::keyword_only;
    }
    if (!is(name, "identifier")) continue;
    param.name = text(name);
    param.var = fresh();
    if (!ts_node_is_null(def)) param.default_value = expr(def);  // in the defining scope
    if (!ts_node_is_null(type)) {
      Instr in = at(Op::call, type);
      // A parameter annotated with a class holds an instance of it where no caller says
      // otherwise: the solver reads `annotate` only for parameters left without a value.
      Var t = annotation(type);
      in.op = Op::copy;
      in.dst = param.var;
      in.a = t;
      in.name = "annotation";
      s.code.push_back(std::move(in));
    }
    st.locals.insert(param.name);
    st.now[param.name] = param.var;
    s.params.push_back(std::move(param));
  }
}

void Lowerer::decorate(TSNode decorated, Var& value) {
  if (ts_node_is_null(decorated)) return;
  auto kids = named_children(decorated);
  // Applied bottom up: the one nearest the def first.
  for (size_t k = kids.size(); k-- > 0;) {
    if (!is(kids[k], "decorator")) continue;
    auto inner = named_children(kids[k]);
    if (inner.empty()) continue;
    Var deco = expr(inner[0]);
    Instr in = at(Op::call, kids[k]);
    Call call;
    call.callee = deco;
    call.args.push_back({value, "", 0});
    call.text = text(inner[0]);
    in.index = int32_t(m_.calls.size());
    m_.calls.push_back(std::move(call));
    in.dst = fresh();
    in.name = "decorator";
    value = emit(std::move(in));
  }
}

void Lowerer::function_def(TSNode n, TSNode decorated) {
  std::string name = text(field(n, "name"));
  Scope s;
  s.kind = Scope::function;
  s.qualified = qualified_child(name);
  s.parent = cur().scope;
  s.cls = cur().cls;
  s.line = python::ts::line(n);
  s.end_line = int(ts_node_end_point(n).row) + 1;
  s.coroutine = has_child(n, "async");
  if (!ts_node_is_null(decorated))
    for (TSNode d : named_children(decorated)) {
      std::string t = text(d);
      if (t == "@property" || t.find("cached_property") != std::string::npos || t.find(".setter") != std::string::npos ||
          t.find(".getter") != std::string::npos || t.find(".deleter") != std::string::npos)
        s.is_property = true;
      if (t == "@staticmethod") s.is_staticmethod = true;
      if (t == "@classmethod") s.is_classmethod = true;
      if (t.find("abstractmethod") != std::string::npos) s.abstract = true;
    }
  int index = int(m_.scopes.size());
  m_.scopes.push_back(std::move(s));

  // Defaults and annotations are evaluated here, in the scope around the def.
  ScopeState st;
  st.scope = index;
  TSNode body = field(n, "body");
  collect_locals(body, st, false);
  {
    Scope tmp;
    params(field(n, "parameters"), tmp, st);
    m_.scopes[size_t(index)].params = std::move(tmp.params);
    for (auto& in : tmp.code) m_.scopes[size_t(index)].code.push_back(std::move(in));
  }
  Instr make = at(Op::function, field(n, "name"));
  make.dst = fresh();
  make.index = index;
  Var value = emit(std::move(make));

  // The body, in its own scope.
  uint32_t outer_guard = guard_;
  guard_ = 0;
  m_.scopes[size_t(index)].returns = fresh();
  m_.scopes[size_t(index)].yields = fresh();
  states_.push_back(std::move(st));
  // A nested function reads a parameter through the scope's summary of the name.
  for (auto& p : m_.scopes[size_t(index)].params) {
    Instr in;
    in.op = Op::copy;
    in.dst = summary_of(cur(), p.name);
    in.a = p.var;
    emit(std::move(in));
  }
  block(body);
  if (!cur().dead) {
    Instr in;
    in.op = Op::ret;
    in.a = constant("None", n);
    emit(std::move(in));
  }
  states_.pop_back();
  guard_ = outer_guard;
  // A body of only `raise NotImplementedError` (past a docstring) waits for an override.
  auto stmts = named_children(body);
  size_t first = !stmts.empty() && is(stmts[0], "expression_statement") &&
                         !named_children(stmts[0]).empty() && is(named_children(stmts[0])[0], "string")
                     ? 1
                     : 0;
  if (stmts.size() == first + 1 && is(stmts[first], "raise_statement") &&
      text(stmts[first]).find("NotImplementedError") != std::string::npos)
    m_.scopes[size_t(index)].abstract = true;
  decorate(decorated, value);
  bind(name, value);
}

void Lowerer::class_def(TSNode n, TSNode decorated) {
  std::string name = text(field(n, "name"));
  Class c;
  c.qualified = qualified_child(name);
  c.scope = cur().scope;
  c.line = python::ts::line(n);
  TSNode supers = field(n, "superclasses");
  if (!ts_node_is_null(supers))
    for (TSNode b : named_children(supers)) {
      if (is(b, "keyword_argument")) {
        if (text(field(b, "name")) == "metaclass") c.metaclass = expr(field(b, "value"));
        else expr(field(b, "value"));
        continue;
      }
      c.bases.push_back(expr(b));
      c.base_text.push_back(text(b));
    }
  int index = int(m_.classes.size());
  m_.classes.push_back(std::move(c));
  class_names_[m_.classes.back().qualified] = index;

  // The body runs now, in the scope around the class: its calls are that scope's.
  ScopeState st;
  st.scope = cur().scope;
  st.cls = index;
  st.dead = cur().dead;
  // The body's own reads of enclosing names go through the states below it.
  states_.push_back(std::move(st));
  block(field(n, "body"));
  states_.pop_back();

  Instr make = at(Op::klass, field(n, "name"));
  make.dst = fresh();
  make.index = index;
  Var value = emit(std::move(make));
  decorate(decorated, value);
  bind(name, value);
}

void Lowerer::import_statement(TSNode n) {
  for (TSNode k : named_children(n)) {
    std::string mod, bound;
    if (is(k, "dotted_name")) {
      mod = text(k);
      bound = mod.substr(0, mod.find('.'));
    } else if (is(k, "aliased_import")) {
      mod = text(field(k, "name"));
      bound = text(field(k, "alias"));
    } else {
      continue;
    }
    Instr in = at(Op::import, k);
    in.dst = fresh();
    // `import a.b` binds a (and makes a.b its attribute); `import a.b as c` binds a.b.
    in.name = is(k, "aliased_import") ? mod : bound;
    in.name2 = mod;
    bind(bound, emit(std::move(in)));
  }
}

void Lowerer::import_from(TSNode n) {
  TSNode modn = field(n, "module_name");
  std::string base;
  if (is(modn, "relative_import")) {
    int level = 0;
    std::string rest;
    for (TSNode k : named_children(modn)) {
      if (is(k, "import_prefix")) level = int(ts_node_end_byte(k) - ts_node_start_byte(k));
      else if (is(k, "dotted_name")) rest = text(k);
    }
    base = absolute_module(m_.name, m_.is_package, level, rest);
    if (base.empty()) return;
  } else {
    base = text(modn);
  }
  for (TSNode k : named_children(n)) {
    if (ts_node_eq(k, modn)) continue;
    std::string name, bound;
    if (is(k, "dotted_name")) {
      name = bound = text(k);
    } else if (is(k, "aliased_import")) {
      name = text(field(k, "name"));
      bound = text(field(k, "alias"));
    } else if (is(k, "wildcard_import")) {
      Instr in = at(Op::star_import, k);
      in.name = base;
      emit(std::move(in));
      continue;
    } else {
      continue;
    }
    Instr in = at(Op::import_from, k);
    in.dst = fresh();
    in.name = base;
    in.name2 = name;
    bind(bound, emit(std::move(in)));
  }
}

}  // namespace sitepatch::audit::flow::detail
