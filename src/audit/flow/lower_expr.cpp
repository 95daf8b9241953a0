// Lowering, part four: expressions, each into a variable, and the tests of `if`/`while`
// into guards. Operators become Op::binary (a dunder the solver calls where the left value
// is an instance of a class that defines it); truth tests of names become guards, and the
// Op::truth the solver turns into __bool__ or __len__ on instances only.
#include "audit/flow/lowerer.hpp"

namespace sitepatch::audit::flow::detail {

using python::ts::field;
using python::ts::is;
using python::ts::named_children;

namespace {

const char* dunder_of(std::string_view op) {
  static const std::pair<const char*, const char*> table[] = {
      {"+", "__add__"},       {"-", "__sub__"},     {"*", "__mul__"},      {"/", "__truediv__"},
      {"//", "__floordiv__"}, {"%", "__mod__"},     {"**", "__pow__"},     {"@", "__matmul__"},
      {"&", "__and__"},       {"|", "__or__"},      {"^", "__xor__"},      {"<<", "__lshift__"},
      {">>", "__rshift__"},   {"==", "__eq__"},     {"!=", "__ne__"},      {"<", "__lt__"},
      {"<=", "__le__"},       {">", "__gt__"},      {">=", "__ge__"},      {"+=", "__iadd__"},
      {"-=", "__isub__"},     {"*=", "__imul__"},   {"/=", "__itruediv__"}, {"|=", "__ior__"},
      {"&=", "__iand__"},     {"//=", "__ifloordiv__"}, {"%=", "__imod__"}, {"@=", "__imatmul__"}};
  for (auto& [o, d] : table)
    if (op == o) return d;
  return nullptr;
}

}  // namespace

std::string Lowerer::literal_of(TSNode n) const {
  if (ts_node_is_null(n)) return {};
  if (is(n, "string")) {
    auto s = python::ts::plain_string(src_, n);
    return s ? "str:" + *s : std::string();
  }
  if (is(n, "integer")) return "int:" + text(n);
  if (is(n, "true")) return "True";
  if (is(n, "false")) return "False";
  if (is(n, "none")) return "None";
  return {};
}

uint32_t Lowerer::guard(Var var, Guard::Test test, const std::string& literal) {
  Guard g;
  g.parent = guard_;
  g.var = var;
  g.test = test;
  g.literal = literal;
  m_.guards.push_back(std::move(g));
  return uint32_t(m_.guards.size() - 1);
}

// `a` or `b`, each a chain of guards under the current one; the current one where either
// tells nothing more.
uint32_t Lowerer::either(uint32_t a, uint32_t b) {
  if (a == guard_ || b == guard_) return guard_;
  uint32_t g = guard(kNoVar, Guard::either);
  m_.guards[g].alt[0] = a;
  m_.guards[g].alt[1] = b;
  return g;
}

// The guards under which an arm runs when `n` is true, and when it is false; the test's
// own code is lowered once, under the current guard. Where a side cannot be told by one
// conjunction of tests (`a or b` true, `a and b` false) it is the current guard.
std::pair<uint32_t, uint32_t> Lowerer::condition(TSNode n) {
  uint32_t here = guard_;
  if (ts_node_is_null(n)) return {here, here};
  if (is(n, "parenthesized_expression") && !named_children(n).empty()) return condition(named_children(n)[0]);
  if (is(n, "not_operator")) {
    auto [pass, fail] = condition(field(n, "argument"));
    return {fail, pass};
  }
  if (is(n, "boolean_operator")) {
    bool is_and = text(ts_node_child(n, 1)) == "and";
    auto [lpass, lfail] = condition(field(n, "left"));
    // The right side runs only where the left one did not decide.
    guard_ = is_and ? lpass : lfail;
    auto [rpass, rfail] = condition(field(n, "right"));
    guard_ = here;
    // The side no one conjunction tells is one of two: the left decided it, or the right did.
    uint32_t other = is_and ? either(lfail, rfail) : either(lpass, rpass);
    return is_and ? std::make_pair(rpass, other) : std::make_pair(other, rfail);
  }
  if (is(n, "comparison_operator")) {
    auto kids = named_children(n);
    std::string op = kids.size() == 2 ? text(ts_node_child(n, 1)) : "";
    if (ts_node_child_count(n) == 4) op = text(ts_node_child(n, 1)) + " " + text(ts_node_child(n, 2));
    if (kids.size() == 2 && (op == "is" || op == "is not" || op == "==" || op == "!=")) {
      TSNode value = kids[0], lit = kids[1];
      if (literal_of(lit).empty() && !literal_of(value).empty()) std::swap(value, lit);
      std::string l = literal_of(lit);
      if (!l.empty()) {
        Var v = expr(value);
        bool positive = op == "is" || op == "==";
        if (l == "None") {
          uint32_t is_none = guard(v, Guard::is_none), not_none = guard(v, Guard::not_none);
          return positive ? std::make_pair(is_none, not_none) : std::make_pair(not_none, is_none);
        }
        uint32_t eq = guard(v, Guard::equals, l), ne = guard(v, Guard::not_equals, l);
        return positive ? std::make_pair(eq, ne) : std::make_pair(ne, eq);
      }
    }
    if (kids.size() == 2 && (op == "in" || op == "not in")) {
      // sys.platform in ("win32", "cygwin"): a test against each literal of a literal tuple.
      std::vector<std::string> among;
      bool literals = is(kids[1], "tuple") || is(kids[1], "list") || is(kids[1], "set");
      for (TSNode k : named_children(kids[1])) {
        std::string l = literal_of(k);
        if (l.empty()) literals = false;
        among.push_back(l);
      }
      if (literals && !among.empty()) {
        Var v = expr(kids[0]);
        uint32_t in = guard(v, Guard::one_of), out = guard(v, Guard::none_of);
        m_.guards[in].among = m_.guards[out].among = among;
        return op == "in" ? std::make_pair(in, out) : std::make_pair(out, in);
      }
    }
  }
  Var v = expr(n);
  if (is(n, "identifier") || is(n, "attribute") || is(n, "call") || is(n, "subscript") ||
      is(n, "named_expression")) {
    Instr t = at(Op::truth, n);
    t.a = v;
    emit(std::move(t));
    return {guard(v, Guard::truthy), guard(v, Guard::falsy)};
  }
  return {here, here};
}

Var Lowerer::expr(TSNode n) {
  if (ts_node_is_null(n)) return constant("unknown", n);
  if (++depth_ > kMaxDepth) {
    --depth_;
    Instr in = at(Op::unknown, n);
    in.dst = fresh();
    return emit(std::move(in));
  }
  Var out = kNoVar;
  std::string lit = literal_of(n);
  if (!lit.empty()) {
    out = constant(lit, n);
  } else if (is(n, "identifier")) {
    out = read(text(n), n);
  } else if (is(n, "attribute")) {
    out = attribute(n);
  } else if (is(n, "call")) {
    out = call(n);
  } else if (is(n, "subscript")) {
    out = subscript(n);
  } else if (is(n, "list")) {
    out = container(n, Container::list);
  } else if (is(n, "tuple") || is(n, "expression_list") || is(n, "pattern_list")) {
    out = container(n, Container::tuple);
  } else if (is(n, "set")) {
    out = container(n, Container::set);
  } else if (is(n, "dictionary")) {
    out = container(n, Container::dict);
  } else if (is(n, "list_comprehension") || is(n, "generator_expression")) {
    out = comprehension(n, Container::list);
  } else if (is(n, "set_comprehension")) {
    out = comprehension(n, Container::set);
  } else if (is(n, "dictionary_comprehension")) {
    out = comprehension(n, Container::dict);
  } else if (is(n, "lambda")) {
    out = lambda(n);
  } else if (is(n, "binary_operator")) {
    out = binary(n, dunder_of(text(ts_node_child(n, 1))) ? dunder_of(text(ts_node_child(n, 1))) : "");
  } else if (is(n, "conditional_expression")) {
    out = conditional(n);
  } else if (is(n, "string") || is(n, "concatenated_string")) {
    out = string(n);
  } else if (is(n, "parenthesized_expression")) {
    auto kids = named_children(n);
    out = kids.empty() ? constant("tuple", n) : expr(kids[0]);
  } else if (is(n, "boolean_operator")) {
    // `a or b` runs b only where a is falsy, `a and b` only where a is truthy.
    bool is_or = text(ts_node_child(n, 1)) == "or";
    Var a = expr(field(n, "left"));
    uint32_t keep = guard_;
    guard_ = guard(a, is_or ? Guard::falsy : Guard::truthy);
    Var b = expr(field(n, "right"));
    guard_ = keep;
    out = fresh();
    for (Var v : {a, b}) {
      Instr in;
      in.op = Op::copy;
      in.dst = out;
      in.a = v;
      emit(std::move(in));
    }
  } else if (is(n, "not_operator")) {
    Var a = expr(field(n, "argument"));
    Instr t = at(Op::truth, n);
    t.a = a;
    emit(std::move(t));
    out = constant("bool", n);
  } else if (is(n, "comparison_operator")) {
    auto kids = named_children(n);
    std::vector<Var> vs;
    for (TSNode k : kids) vs.push_back(expr(k));
    std::string op = ts_node_child_count(n) >= 3 ? text(ts_node_child(n, 1)) : "";
    if (vs.size() == 2 && (op == "in" || op == "not")) {
      Instr in = at(Op::implicit, n);
      in.a = vs[1];
      in.b = vs[0];
      in.name = "__contains__";
      emit(std::move(in));
    } else if (vs.size() == 2 && dunder_of(op)) {
      Instr in = at(Op::binary, n);
      in.dst = fresh();
      in.a = vs[0];
      in.b = vs[1];
      in.name = dunder_of(op);
      // `sys.platform == "win32"` of two literals is True or False (IS_WINDOWS = ...).
      if (op == "==" || op == "!=") {
        in.name2 = "compare";
        out = emit(std::move(in));
        return out;
      }
      emit(std::move(in));
    }
    out = constant("bool", n);
  } else if (is(n, "unary_operator")) {
    Var a = expr(field(n, "argument"));
    Instr in = at(Op::implicit, n);
    std::string op = text(ts_node_child(n, 0));
    in.a = a;
    in.name = op == "-" ? "__neg__" : op == "~" ? "__invert__" : "__pos__";
    emit(std::move(in));
    TSNode arg = field(n, "argument");
    out = is(arg, "integer") || is(arg, "float") ? constant("int", n) : a;
  } else if (is(n, "await")) {
    Instr in = at(Op::await, n);
    in.a = expr(named_children(n).at(0));
    in.dst = fresh();
    out = emit(std::move(in));
  } else if (is(n, "named_expression")) {
    out = expr(field(n, "value"));
    assign(field(n, "name"), out);
  } else if (is(n, "assignment")) {
    out = assignment(n);
  } else if (is(n, "augmented_assignment")) {
    TSNode left = field(n, "left");
    if (cur().scope == 0 && cur().cls < 0 && text(left) == "__all__") exports(field(n, "right"), true);
    Var a = expr(left), b = expr(field(n, "right"));
    std::string op = text(ts_node_child(n, 1));
    Instr in = at(Op::binary, n);
    in.dst = fresh();
    in.a = a;
    in.b = b;
    in.name = dunder_of(op) ? dunder_of(op) : "";
    out = emit(std::move(in));
    assign(left, out);
  } else if (is(n, "yield")) {
    auto kids = named_children(n);
    bool from = ts_node_child_count(n) >= 2 && text(ts_node_child(n, 1)) == "from";
    Instr in = at(from ? Op::yield_from : Op::yield, n);
    in.a = kids.empty() ? constant("None", n) : expr(kids[0]);
    in.dst = fresh();
    m_.scopes[size_t(cur().scope)].generator = true;
    out = emit(std::move(in));
  } else if (is(n, "list_splat") || is(n, "dictionary_splat") || is(n, "parenthesized_list_splat")) {
    auto kids = named_children(n);
    out = kids.empty() ? constant("unknown", n) : expr(kids[0]);
  } else if (is(n, "keyword_argument")) {
    out = expr(field(n, "value"));
  } else if (is(n, "integer") || is(n, "float") || is(n, "ellipsis") || is(n, "slice")) {
    for (TSNode k : named_children(n)) expr(k);
    out = constant(is(n, "float") ? "float" : "int", n);
  } else {
    // Whatever else: its parts still run.
    for (TSNode k : named_children(n)) expr(k);
    Instr in = at(Op::unknown, n);
    in.dst = fresh();
    out = emit(std::move(in));
  }
  --depth_;
  return out;
}

Var Lowerer::attribute(TSNode n) {
  Instr in = at(Op::load_attr, field(n, "attribute"));
  in.a = expr(field(n, "object"));
  in.name = text(field(n, "attribute"));
  in.dst = fresh();
  return emit(std::move(in));
}

Var Lowerer::subscript(TSNode n) {
  Instr in = at(Op::load_item, n);
  in.a = expr(field(n, "value"));
  TSNode key = field(n, "subscript");
  if (is(key, "slice")) {
    // x[a:b] is a part of x: its items (from position a on, when a is a literal).
    auto parts = named_children(key);
    for (TSNode k : parts) expr(k);
    bool from_literal = !parts.empty() && is(parts[0], "integer") && ts_node_start_byte(parts[0]) == ts_node_start_byte(key);
    in.name = from_literal ? "slice:" + text(parts[0]) : "slice:";
    in.dst = fresh();
    return emit(std::move(in));
  }
  in.name = literal_of(key);
  in.b = ts_node_is_null(key) ? kNoVar : expr(key);
  in.dst = fresh();
  return emit(std::move(in));
}

Var Lowerer::call(TSNode n) {
  TSNode fn = field(n, "function");
  Call c;
  c.callee = expr(fn);
  c.text = text(fn);
  TSNode args = field(n, "arguments");
  if (is(args, "generator_expression")) {
    c.args.push_back({expr(args), "", 0});
  } else {
    for (TSNode a : named_children(args)) {
      if (is(a, "comment")) continue;
      Arg arg;
      if (is(a, "keyword_argument")) arg.keyword = text(field(a, "name"));
      if (is(a, "list_splat")) arg.star = 1;
      if (is(a, "dictionary_splat")) arg.star = 2;
      arg.var = expr(a);
      c.args.push_back(std::move(arg));
    }
  }
  Instr in = at(Op::call, fn);
  in.index = int32_t(m_.calls.size());
  m_.calls.push_back(std::move(c));
  in.dst = fresh();
  return emit(std::move(in));
}

Var Lowerer::container(TSNode n, Container::Kind kind) {
  Container c;
  c.kind = kind;
  for (TSNode k : named_children(n)) {
    if (is(k, "comment")) continue;
    if (kind == Container::dict && is(k, "pair")) {
      c.keys.push_back(literal_of(field(k, "key")));
      c.key_vars.push_back(c.keys.back().empty() ? expr(field(k, "key")) : kNoVar);
      c.items.push_back(expr(field(k, "value")));
      c.starred.push_back(0);
      continue;
    }
    bool star = is(k, "list_splat") || is(k, "dictionary_splat");
    c.items.push_back(expr(k));
    c.keys.push_back({});
    c.key_vars.push_back(kNoVar);
    c.starred.push_back(star ? 1 : 0);
  }
  Instr in = at(Op::make_list, n);
  in.index = int32_t(m_.containers.size());
  m_.containers.push_back(std::move(c));
  in.dst = fresh();
  return emit(std::move(in));
}

Var Lowerer::comprehension(TSNode n, Container::Kind kind) {
  // Its names are its own: the bindings are put back after.
  Bindings saved = cur().now;
  std::set<std::string> saved_locals = cur().locals;
  TSNode body = field(n, "body");
  for (TSNode k : named_children(n)) {
    if (is(k, "for_in_clause")) {
      ScopeState probe;
      collect_locals(k, probe, false);
      for (auto& name : probe.locals) cur().locals.insert(name);
      Instr in = at(Op::iterate, field(k, "right"));
      in.a = expr(field(k, "right"));
      in.dst = fresh();
      Var item = emit(std::move(in));
      assign(field(k, "left"), item);
    } else if (is(k, "if_clause")) {
      for (TSNode c : named_children(k)) expr(c);
    }
  }
  Container c;
  c.kind = kind;
  if (kind == Container::dict && is(body, "pair")) {
    c.key_vars.push_back(expr(field(body, "key")));
    c.items.push_back(expr(field(body, "value")));
  } else {
    c.key_vars.push_back(kNoVar);
    c.items.push_back(expr(body));
  }
  c.keys.push_back({});
  c.starred.push_back(0);
  cur().now = saved;
  cur().locals = saved_locals;
  Instr in = at(Op::make_list, n);
  in.index = int32_t(m_.containers.size());
  m_.containers.push_back(std::move(c));
  in.dst = fresh();
  return emit(std::move(in));
}

Var Lowerer::lambda(TSNode n) {
  Scope s;
  s.kind = Scope::lambda;
  s.qualified = qualified_child("<lambda" + std::to_string(++cur().lambdas) + ">");
  s.parent = cur().scope;
  s.line = python::ts::line(n);
  s.end_line = int(ts_node_end_point(n).row) + 1;
  int index = int(m_.scopes.size());
  m_.scopes.push_back(std::move(s));
  ScopeState st;
  st.scope = index;
  TSNode ps = field(n, "parameters");
  if (!ts_node_is_null(ps)) {
    Scope tmp;
    params(ps, tmp, st);
    m_.scopes[size_t(index)].params = std::move(tmp.params);
  }
  Instr make = at(Op::function, n);
  make.dst = fresh();
  make.index = index;
  Var value = emit(std::move(make));
  uint32_t outer_guard = guard_;
  guard_ = 0;
  m_.scopes[size_t(index)].returns = fresh();
  m_.scopes[size_t(index)].yields = fresh();
  states_.push_back(std::move(st));
  Instr ret = at(Op::ret, n);
  ret.a = expr(field(n, "body"));
  emit(std::move(ret));
  states_.pop_back();
  guard_ = outer_guard;
  return value;
}

Var Lowerer::binary(TSNode n, const std::string& dunder) {
  Instr in = at(Op::binary, n);
  in.a = expr(field(n, "left"));
  in.b = expr(field(n, "right"));
  in.name = dunder;
  in.dst = fresh();
  return emit(std::move(in));
}

Var Lowerer::conditional(TSNode n) {
  auto kids = named_children(n);
  if (kids.size() < 3) return constant("unknown", n);
  uint32_t keep = guard_;
  auto [pass, fail] = condition(kids[1]);
  Var out = fresh();
  guard_ = pass;
  Var a = expr(kids[0]);
  Instr ca;
  ca.op = Op::copy;
  ca.dst = out;
  ca.a = a;
  emit(std::move(ca));
  guard_ = fail;
  Var b = expr(kids[2]);
  Instr cb;
  cb.op = Op::copy;
  cb.dst = out;
  cb.a = b;
  emit(std::move(cb));
  guard_ = keep;
  return out;
}

Var Lowerer::string(TSNode n) {
  // An f-string's fields are formatted: __format__ (object's falls back to __str__).
  std::vector<TSNode> todo{n};
  while (!todo.empty()) {
    TSNode k = todo.back();
    todo.pop_back();
    if (is(k, "interpolation")) {
      auto kids = named_children(k);
      if (!kids.empty()) {
        Instr in = at(Op::implicit, kids[0]);
        in.a = expr(kids[0]);
        in.name = "__format__";
        emit(std::move(in));
      }
      continue;
    }
    for (TSNode c : named_children(k)) todo.push_back(c);
  }
  return constant("str", n);
}

// `__all__ = [...]` (or `+=`) of literal strings: what a star import of the module binds.
// Anything else written to it leaves the exports unknown (every public name).
void Lowerer::exports(TSNode value, bool more) {
  if (more && !m_.all_listed) return;
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
  m_.all_listed = literal;
  if (!literal) m_.all.clear();
}

}  // namespace sitepatch::audit::flow::detail
