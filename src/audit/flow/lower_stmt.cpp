// Lowering, part two: statements. Branches fork the current bindings and join them after
// (a name bound differently in two arms is a new variable fed by both); a loop's names are
// joined at its head (what the body bound flows back); code after return, raise, break or
// continue in a block is never lowered. Each arm of an `if` carries the guard its test
// gives (flow/lower_expr.cpp `condition`), so the solver skips an arm no value can enter.
#include "audit/flow/lowerer.hpp"
#include "sitepatch/audit/facts.hpp"

namespace sitepatch::audit::flow::detail {

using python::ts::field;
using python::ts::is;
using python::ts::named_children;

void Lowerer::block(TSNode n) {
  for (TSNode k : named_children(n)) {
    if (cur().dead) return;
    statement(k);
  }
}

Bindings Lowerer::join(const std::vector<Bindings>& arms, const Bindings& before) {
  if (arms.empty()) return before;
  if (arms.size() == 1) return arms[0];
  Bindings out;
  std::set<std::string> names;
  for (auto& a : arms)
    for (auto& [k, v] : a) names.insert(k);
  for (auto& name : names) {
    std::vector<Var> from;
    bool missing = false;
    for (auto& a : arms) {
      auto it = a.find(name);
      if (it == a.end()) missing = true;
      else if (std::find(from.begin(), from.end(), it->second) == from.end()) from.push_back(it->second);
    }
    if (missing) continue;  // unbound on some path: a later read takes the summary
    if (from.size() == 1) {
      out[name] = from[0];
      continue;
    }
    Var j = fresh();
    for (Var v : from) {
      Instr in;
      in.op = Op::copy;
      in.dst = j;
      in.a = v;
      uint32_t keep = guard_;
      guard_ = 0;
      emit(std::move(in));
      guard_ = keep;
    }
    out[name] = j;
  }
  return out;
}

void Lowerer::statement(TSNode n) {
  if (++depth_ > kMaxDepth) {
    --depth_;
    return;
  }
  if (is(n, "expression_statement")) {
    for (TSNode k : named_children(n)) expr(k);
  } else if (is(n, "return_statement")) {
    auto kids = named_children(n);
    Instr in = at(Op::ret, n);
    in.a = kids.empty() ? constant("None", n) : expr(kids[0]);
    emit(std::move(in));
    cur().dead = true;
  } else if (is(n, "raise_statement")) {
    auto kids = named_children(n);
    if (!kids.empty()) {
      Instr in = at(Op::raise, n);
      in.a = expr(kids[0]);
      emit(std::move(in));
    }
    cur().dead = true;
  } else if (is(n, "break_statement") || is(n, "continue_statement")) {
    cur().dead = true;
  } else if (is(n, "if_statement")) {
    if_statement(n);
  } else if (is(n, "for_statement")) {
    loop(n, true);
  } else if (is(n, "while_statement")) {
    loop(n, false);
  } else if (is(n, "try_statement")) {
    try_statement(n);
  } else if (is(n, "with_statement")) {
    with_statement(n);
  } else if (is(n, "function_definition")) {
    function_def(n, TSNode{});
  } else if (is(n, "class_definition")) {
    class_def(n, TSNode{});
  } else if (is(n, "decorated_definition")) {
    TSNode def = field(n, "definition");
    if (is(def, "function_definition")) function_def(def, n);
    else if (is(def, "class_definition")) class_def(def, n);
  } else if (is(n, "import_statement")) {
    import_statement(n);
  } else if (is(n, "import_from_statement") || is(n, "future_import_statement")) {
    if (is(n, "import_from_statement")) import_from(n);
  } else if (is(n, "match_statement")) {
    match_statement(n);
  } else if (is(n, "delete_statement")) {
    for (TSNode k : named_children(n)) {
      auto targets = is(k, "expression_list") ? named_children(k) : std::vector<TSNode>{k};
      for (TSNode t : targets) {
        if (!is(t, "subscript")) continue;
        Instr in = at(Op::implicit, t);
        in.a = expr(field(t, "value"));
        expr(field(t, "subscript"));
        in.name = "__delitem__";
        emit(std::move(in));
      }
    }
  } else if (is(n, "assert_statement") || is(n, "print_statement") ||
             is(n, "exec_statement") || is(n, "type_alias_statement")) {
    for (TSNode k : named_children(n)) expr(k);
  } else if (is(n, "block")) {
    block(n);
  }
  --depth_;
}

void Lowerer::assign(TSNode t, Var value) {
  if (ts_node_is_null(t)) return;
  if (is(t, "identifier")) {
    bind(text(t), value);
  } else if (is(t, "attribute")) {
    Instr in = at(Op::store_attr, t);
    in.a = expr(field(t, "object"));
    in.name = text(field(t, "attribute"));
    in.b = value;
    emit(std::move(in));
  } else if (is(t, "subscript")) {
    Instr in = at(Op::store_item, t);
    in.a = expr(field(t, "value"));
    TSNode key = field(t, "subscript");
    in.name = literal_of(key);
    if (in.name.empty() && !ts_node_is_null(key)) in.dst = expr(key);  // a key known only by its values
    in.b = value;
    emit(std::move(in));
  } else if (is(t, "pattern_list") || is(t, "tuple_pattern") || is(t, "list_pattern") || is(t, "tuple") ||
             is(t, "list") || is(t, "expression_list")) {
    auto kids = named_children(t);
    for (size_t k = 0; k < kids.size(); ++k) {
      bool star = is(kids[k], "list_splat_pattern") || is(kids[k], "list_splat");
      Instr in = at(Op::unpack, kids[k]);
      in.dst = fresh();
      in.a = value;
      in.index = star ? -1 : int32_t(k);
      if (star) in.name = std::to_string(k) + "/" + std::to_string(kids.size());
      Var item = emit(std::move(in));
      assign(star ? named_children(kids[k]).at(0) : kids[k], item);
    }
  } else if (is(t, "parenthesized_expression")) {
    auto kids = named_children(t);
    if (!kids.empty()) assign(kids[0], value);
  }
}

// Whether every test from `guard` up to `outer` is of a parameter of the scope lowered.
bool Lowerer::on_parameters(uint32_t guard, uint32_t outer) const {
  const Scope& sc = m_.scopes[size_t(states_.back().scope)];
  if (sc.kind == Scope::module || guard == outer) return false;
  for (uint32_t g = guard; g != outer && g != 0; g = m_.guards[g].parent)
    if (std::none_of(sc.params.begin(), sc.params.end(), [&](const Param& p) { return p.var == m_.guards[g].var; }))
      return false;
  return true;
}

void Lowerer::if_statement(TSNode n) {
  Bindings before = cur().now;
  uint32_t outer = guard_;
  std::vector<Bindings> arms;
  // Each arm runs when its own test passes and every test before it failed.
  std::vector<TSNode> tests{field(n, "condition")};
  std::vector<TSNode> bodies{field(n, "consequence")};
  TSNode otherwise{};
  for (TSNode k : named_children(n)) {
    if (is(k, "elif_clause")) {
      tests.push_back(field(k, "condition"));
      bodies.push_back(field(k, "consequence"));
    } else if (is(k, "else_clause")) {
      otherwise = field(k, "body");
    }
  }
  uint32_t failed = outer;  // the guard of "every test so far failed"
  std::vector<uint32_t> open;  // the guards of the arms that fall through to what follows
  for (size_t a = 0; a < tests.size(); ++a) {
    guard_ = failed;
    cur().now = before;
    auto [pass, fail] = condition(tests[a]);
    before = cur().now;  // what the test bound (`if x := f():`) holds in every arm after it
    cur().dead = false;
    guard_ = pass;
    block(bodies[a]);
    if (!cur().dead) {
      arms.push_back(cur().now);
      open.push_back(pass);
    }
    failed = fail;
  }
  cur().now = before;
  cur().dead = false;
  guard_ = failed;
  if (!ts_node_is_null(otherwise)) block(otherwise);
  if (!cur().dead) {
    arms.push_back(cur().now);
    open.push_back(failed);
  }
  // `if not verbose: return` — what follows runs only where the one arm that falls
  // through does: under its guard, when its tests are of the function's parameters (what
  // the callers' literal arguments decide). Every early return guarding the rest of its
  // body made torch's import-time code wait on tests nothing decides: 20 times slower.
  guard_ = open.size() == 1 && on_parameters(open[0], outer) ? open[0] : outer;
  cur().dead = arms.empty();
  cur().now = join(arms, before);
}

void Lowerer::loop(TSNode n, bool is_for) {
  // The names the body binds are joined at the head: what a turn bound flows into the next.
  ScopeState probe;
  collect_locals(field(n, "body"), probe, false);
  if (is_for) collect_locals(field(n, "left"), probe, false);
  Bindings head = cur().now;
  std::map<std::string, Var> joins;
  for (auto& name : probe.locals) {
    if (!cur().locals.count(name) && cur().cls < 0 && cur().scope != 0) continue;
    Var j = fresh();
    auto it = head.find(name);
    if (it != head.end()) {
      Instr in;
      in.op = Op::copy;
      in.dst = j;
      in.a = it->second;
      emit(std::move(in));
    }
    joins[name] = j;
    head[name] = j;
  }
  Bindings before = cur().now;
  uint32_t outer = guard_;
  if (is_for) {
    Instr in = at(Op::iterate, field(n, "right"));
    if (ts_node_child_count(n) > 0 && is(ts_node_child(n, 0), "async")) in.name = "async";
    in.a = expr(field(n, "right"));
    in.dst = fresh();
    cur().now = head;
    Var item = emit(std::move(in));
    assign(field(n, "left"), item);
  } else {
    cur().now = head;
    guard_ = condition(field(n, "condition")).first;
  }
  block(field(n, "body"));
  for (auto& [name, j] : joins) {
    auto it = cur().now.find(name);
    if (it == cur().now.end() || it->second == j) continue;
    Instr in;
    in.op = Op::copy;
    in.dst = j;
    in.a = it->second;
    uint32_t keep = guard_;
    guard_ = 0;
    emit(std::move(in));
    guard_ = keep;
  }
  guard_ = outer;
  cur().dead = false;
  // After the loop: what the head held (no turn, or the last one's, which flowed back).
  cur().now = before;
  for (auto& [name, j] : joins) cur().now[name] = j;
  for (TSNode k : named_children(n))
    if (is(k, "else_clause")) {
      // The else arm runs when no `break` ended the loop: what follows the loop runs
      // after a break even when the else arm raises.
      block(field(k, "body"));
      cur().dead = false;
    }
}

void Lowerer::try_statement(TSNode n) {
  Bindings before = cur().now;
  uint32_t outer = guard_;
  block(field(n, "body"));
  bool body_dead = cur().dead;
  Bindings after_body = cur().now;
  // A handler may start anywhere in the body: what the body bound joins what came before.
  cur().dead = false;
  Bindings handler_start = join({before, after_body}, before);
  std::vector<Bindings> arms;
  TSNode finally{};
  bool has_else = false;
  for (TSNode k : named_children(n)) {
    if (is(k, "else_clause")) {
      cur().now = after_body;
      cur().dead = body_dead;
      block(field(k, "body"));
      if (!cur().dead) arms.push_back(cur().now);
      has_else = true;
    } else if (is(k, "except_clause") || is(k, "except_group_clause")) {
      cur().now = handler_start;
      cur().dead = false;
      for (TSNode c : named_children(k)) {
        if (is(c, "block")) {
          block(c);
        } else if (is(c, "as_pattern")) {
          // except E as e: e is an instance of E.
          Var cls = expr(named_children(c).at(0));
          Instr in = at(Op::call, c);
          Call call;
          call.callee = cls;
          call.text = "<exception>";
          in.index = int32_t(m_.calls.size());
          m_.calls.push_back(std::move(call));
          in.dst = fresh();
          in.name = "no-edge";
          Var made = emit(std::move(in));
          TSNode alias = field(c, "alias");
          if (!ts_node_is_null(alias)) {
            auto kids = named_children(alias);
            assign(is(alias, "as_pattern_target") && !kids.empty() ? kids[0] : alias, made);
          }
        } else {
          expr(c);
        }
      }
      if (!cur().dead) arms.push_back(cur().now);
    } else if (is(k, "finally_clause")) {
      finally = k;
    }
  }
  if (!has_else && !body_dead) arms.push_back(after_body);
  guard_ = outer;
  cur().dead = arms.empty();
  cur().now = join(arms, before);
  if (!ts_node_is_null(finally)) {
    bool dead = cur().dead;
    cur().dead = false;
    for (TSNode c : named_children(finally))
      if (is(c, "block")) block(c);
    cur().dead = cur().dead || dead;
  }
}

void Lowerer::with_statement(TSNode n) {
  for (TSNode clause : named_children(n)) {
    if (!is(clause, "with_clause")) continue;
    for (TSNode item : named_children(clause)) {
      if (!is(item, "with_item")) continue;
      TSNode value = field(item, "value");
      TSNode target{};
      if (is(value, "as_pattern")) {
        target = field(value, "alias");
        value = named_children(value).at(0);
      }
      Instr in = at(Op::enter, value);
      if (ts_node_child_count(n) > 0 && is(ts_node_child(n, 0), "async")) in.name = "async";
      in.a = expr(value);
      in.dst = fresh();
      Var entered = emit(std::move(in));
      if (!ts_node_is_null(target)) {
        auto kids = named_children(target);
        assign(is(target, "as_pattern_target") && !kids.empty() ? kids[0] : target, entered);
      }
    }
  }
  block(field(n, "body"));
}

void Lowerer::match_statement(TSNode n) {
  for (TSNode k : named_children(n)) {
    if (is(k, "block")) {
      Bindings before = cur().now;
      std::vector<Bindings> arms{before};
      for (TSNode c : named_children(k)) {
        if (!is(c, "case_clause")) continue;
        cur().now = before;
        cur().dead = false;
        for (TSNode b : named_children(c))
          if (is(b, "block")) block(b);
        if (!cur().dead) arms.push_back(cur().now);
      }
      cur().dead = false;
      cur().now = join(arms, before);
    } else if (!is(k, "case_clause")) {
      expr(k);
    }
  }
}

// a = b = c: the right side once, every target bound to it. An annotation says what the
// target holds where the value does not: `x: T` alone in a class body (a dataclass field,
// `spec: JitSpec` set elsewhere), `x: List[Path] = []` (an empty collection says nothing of
// its items). `cuda: Optional[str] = None` is kept as None: a build writes such constants.
Var Lowerer::assignment(TSNode n) {
  TSNode right = field(n, "right"), type = field(n, "type");
  Var out = ts_node_is_null(right) ? kNoVar : expr(right);
  auto annotated = [&](Var into) {
    Instr says = at(Op::copy, n);
    says.a = annotation(type);
    says.dst = into;
    says.name = "annotated";
    emit(std::move(says));
  };
  if (out == kNoVar && !ts_node_is_null(type)) {
    if (cur().cls >= 0) {
      Var v = fresh();
      annotated(v);
      assign(field(n, "left"), v);
    } else {
      annotation(type);  // elsewhere a later assignment gives the value
    }
  } else {
    bool empty = (is(right, "list") || is(right, "dictionary") || is(right, "set")) && named_children(right).empty();
    if (!ts_node_is_null(type) && out != kNoVar && empty) {
      Instr keep = at(Op::copy, n);
      keep.a = out;
      keep.dst = fresh();
      out = emit(std::move(keep));
      annotated(out);
    }
    assign(field(n, "left"), out);
    if (cur().cls >= 0 && is(right, "call")) field_factory(out);
  }
  if (cur().scope == 0 && cur().cls < 0 && text(field(n, "left")) == "__all__") exports(right, false);
  return out == kNoVar ? constant("None", n) : out;
}

}  // namespace sitepatch::audit::flow::detail
