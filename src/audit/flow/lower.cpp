// Lowering, part one: variables, scopes and what a name means where it is read. A
// function's locals are the names it binds anywhere (Python decides that per scope, not
// per line); a read of one gets its current variable, or its summary where the code has
// not bound it yet on that path (a loop's earlier turn, a closure). A name no scope binds
// is the module's (its summary: what every assignment at the top level gave it), and one
// the module never binds is a builtin or comes from a star import (Op::star_import).
#include <algorithm>

#include "audit/flow/lowerer.hpp"
#include "sitepatch/audit/facts.hpp"

namespace sitepatch::audit::flow {
namespace detail {

using python::ts::field;
using python::ts::is;

Var Lowerer::fresh() { return m_.vars++; }

Instr Lowerer::at(Op op, TSNode n) const {
  Instr in;
  in.op = op;
  if (!ts_node_is_null(n)) {
    TSPoint p = ts_node_start_point(n);
    in.line = int(p.row) + 1;
    in.column = int(p.column) + 1;
  }
  return in;
}

Var Lowerer::emit(Instr in) {
  if (cur().dead) return in.dst;
  in.guard = guard_;
  m_.scopes[size_t(cur().scope)].code.push_back(std::move(in));
  return m_.scopes[size_t(cur().scope)].code.back().dst;
}

Var Lowerer::constant(const std::string& what, TSNode n) {
  Instr in = at(Op::constant, n);
  in.dst = fresh();
  in.name = what;
  return emit(std::move(in));
}

std::string Lowerer::qualified_child(const std::string& name) const {
  // A class body's names are the class's; a function's nested defs are under it.
  for (auto it = states_.rbegin(); it != states_.rend(); ++it) {
    if (it->cls >= 0) return m_.classes[size_t(it->cls)].qualified + "." + name;
    const std::string& q = m_.scopes[size_t(it->scope)].qualified;
    return q.empty() ? name : q + "." + name;
  }
  return name;
}

// The names a scope binds: assignments, for targets, with ... as, imports, def, class,
// except ... as, walrus, del; not those of nested functions, lambdas or classes (their
// own), but those of comprehensions' bodies are close enough to count (Python 3 gives
// comprehension targets their own scope; a name there shadows nothing we follow).
void Lowerer::collect_locals(TSNode body, ScopeState& st, bool is_class) const {
  std::vector<TSNode> todo{body};
  auto add_targets = [&](TSNode t, auto& self) -> void {
    if (ts_node_is_null(t)) return;
    if (is(t, "identifier")) {
      st.locals.insert(text(t));
      return;
    }
    if (is(t, "pattern_list") || is(t, "tuple_pattern") || is(t, "list_pattern") || is(t, "tuple") ||
        is(t, "list") || is(t, "list_splat_pattern") || is(t, "parenthesized_expression") ||
        is(t, "expression_list"))
      for (TSNode k : python::ts::named_children(t)) self(k, self);
  };
  while (!todo.empty()) {
    TSNode n = todo.back();
    todo.pop_back();
    if (ts_node_is_null(n)) continue;
    if (is(n, "function_definition") || is(n, "class_definition")) {
      st.locals.insert(text(field(n, "name")));
      // Decorators, defaults and bases run here; bodies do not.
      for (TSNode k : python::ts::named_children(n))
        if (!is(k, "block") && !is(k, "identifier")) todo.push_back(k);
      continue;
    }
    if (is(n, "lambda")) continue;
    if (is(n, "global_statement") || is(n, "nonlocal_statement")) {
      for (TSNode k : python::ts::named_children(n))
        if (is(k, "identifier"))
          (is(n, "global_statement") ? st.globals : st.nonlocals).insert(text(k));
      continue;
    }
    if (is(n, "assignment") || is(n, "augmented_assignment")) add_targets(field(n, "left"), add_targets);
    if (is(n, "for_statement") || is(n, "for_in_clause")) add_targets(field(n, "left"), add_targets);
    if (is(n, "named_expression")) add_targets(field(n, "name"), add_targets);
    if (is(n, "as_pattern")) add_targets(field(n, "alias"), add_targets);
    if (is(n, "as_pattern_target")) add_targets(python::ts::named_children(n).empty() ? TSNode{} : python::ts::named_children(n)[0], add_targets);
    if (is(n, "except_clause"))
      for (TSNode k : python::ts::named_children(n))
        if (is(k, "as_pattern")) add_targets(field(k, "alias"), add_targets);
    if (is(n, "import_statement") || is(n, "import_from_statement")) {
      for (TSNode k : python::ts::named_children(n)) {
        if (is(k, "aliased_import")) st.locals.insert(text(field(k, "alias")));
        else if (is(k, "dotted_name") && !(is(n, "import_from_statement") && ts_node_eq(k, field(n, "module_name"))))
          st.locals.insert(is(n, "import_statement") ? text(k).substr(0, text(k).find('.')) : text(k));
      }
      continue;
    }
    for (TSNode k : python::ts::named_children(n)) todo.push_back(k);
  }
  (void)is_class;
  for (auto& g : st.globals) st.locals.erase(g);
  for (auto& g : st.nonlocals) st.locals.erase(g);
}

Var Lowerer::summary_of(ScopeState& st, const std::string& name) {
  if (st.scope == 0 && st.cls < 0) {
    auto [it, fresh_one] = m_.globals.emplace(name, 0);
    if (fresh_one) it->second = fresh();
    return it->second;
  }
  auto [it, fresh_one] = st.summary.emplace(name, 0);
  if (fresh_one) it->second = fresh();
  return it->second;
}

Var Lowerer::read(const std::string& name, TSNode where) {
  ScopeState& here = cur();
  // The innermost scope's own binding, flow-sensitively.
  if (here.cls < 0 && here.locals.count(name) && !here.globals.count(name) &&
      !(&here == &states_.front() && rebound_.count(name))) {
    auto it = here.now.find(name);
    return it != here.now.end() ? it->second : summary_of(here, name);
  }
  if (here.cls >= 0) {
    // A class body sees its own names first, then the scopes around it.
    auto it = here.now.find(name);
    if (it != here.now.end()) return it->second;
  }
  // Enclosing functions (class bodies are skipped), then the module.
  if (!here.globals.count(name))
    for (size_t k = states_.size() - 1; k-- > 0;) {
      ScopeState& st = states_[k];
      if (st.cls >= 0) continue;
      bool module_level = st.scope == 0;
      if (module_level) break;
      if (st.locals.count(name) && !st.globals.count(name)) return summary_of(st, name);
    }
  ScopeState& top = states_.front();
  if (&here == &top && !rebound_.count(name)) {
    auto it = top.now.find(name);
    if (it != top.now.end()) return it->second;
  }
  if (top.locals.count(name)) return summary_of(top, name);
  // Never bound in this module: a builtin, or a star import's.
  Instr in = at(Op::import_from, where);
  in.dst = fresh();
  in.name = "builtins";
  in.name2 = name;
  return emit(std::move(in));
}

void Lowerer::bind(const std::string& name, Var value) {
  ScopeState& here = cur();
  if (here.cls >= 0) {
    here.now[name] = value;
    auto& attrs = m_.classes[size_t(here.cls)].attrs;
    auto [it, fresh_one] = attrs.emplace(name, 0);
    if (fresh_one) it->second = fresh();
    Instr in;
    in.op = Op::copy;
    in.dst = it->second;
    in.a = value;
    emit(std::move(in));
    return;
  }
  ScopeState* owner = &here;
  if (here.globals.count(name)) {
    owner = &states_.front();
  } else if (here.nonlocals.count(name)) {
    for (size_t k = states_.size() - 1; k-- > 0;)
      if (states_[k].cls < 0 && states_[k].locals.count(name)) {
        owner = &states_[k];
        break;
      }
  }
  if (guard_ != 0) {
    // Bound only where the guard passes: the name's variable is fed under the guard.
    Var v = fresh();
    Instr g;
    g.op = Op::copy;
    g.dst = v;
    g.a = value;
    emit(std::move(g));
    value = v;
  }
  if (owner == &here) here.now[name] = value;
  Instr in;
  in.op = Op::copy;
  in.dst = summary_of(*owner, name);
  in.a = value;
  emit(std::move(in));
}

void Lowerer::run(TSNode root) {
  Scope top;
  top.kind = Scope::module;
  top.end_line = int(ts_node_end_point(root).row) + 1;
  top.line = 1;
  m_.scopes.push_back(std::move(top));
  states_.emplace_back();
  collect_locals(root, states_.back(), false);
  std::vector<TSNode> todo;
  if (src_.find("global ") != std::string_view::npos) todo.push_back(root);
  while (!todo.empty()) {
    TSNode n = todo.back();
    todo.pop_back();
    if (is(n, "global_statement")) {
      for (TSNode k : python::ts::named_children(n))
        if (is(k, "identifier")) rebound_.insert(text(k));
      continue;
    }
    for (uint32_t k = 0; k < ts_node_named_child_count(n); ++k) todo.push_back(ts_node_named_child(n, k));
  }
  block(root);
  // The module's names as the rest of the program sees them: every binding.
}

}  // namespace detail

Module lower(std::string_view source, const std::string& module, bool is_package) {
  Module m;
  m.name = module;
  m.is_package = is_package;
  python::ts::Tree tree(source, module);
  if (ts_node_has_error(tree.root())) {
    // Count the errors; the rest is still read.
    std::vector<TSNode> todo{tree.root()};
    while (!todo.empty()) {
      TSNode n = todo.back();
      todo.pop_back();
      if (python::ts::is(n, "ERROR") || ts_node_is_missing(n)) ++m.syntax_errors;
      if (ts_node_has_error(n))
        for (uint32_t k = 0; k < ts_node_child_count(n); ++k) todo.push_back(ts_node_child(n, k));
    }
  }
  detail::Lowerer(source, m).run(tree.root());
  // Kept for the whole walk (torch's import reads 200 modules): without the slack of their
  // growth, a third less.
  for (Scope& s : m.scopes) s.code.shrink_to_fit();
  m.scopes.shrink_to_fit();
  m.calls.shrink_to_fit();
  return m;
}

}  // namespace sitepatch::audit::flow
