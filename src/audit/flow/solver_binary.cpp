// Operators: `a + b` and the other binary dunders (a str where one side is one, the items
// of both lists), and comparisons (True or False where both sides are literals).
#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

// a == b, a != b: True or False where both are literals, an instance's __eq__/__ne__ where
// a holds one, else a bool nobody knows.
void Solver::Impl::compare(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module;
  auto g = [&](Var v) { return ivar(id, v); };
  auto literal = [&](const Value& x) {
    if (x.kind != Kind::constant) return false;
    const std::string& c = strings[x.a];
    return c == "None" || c == "True" || c == "False" || c.find(':') != std::string::npos;
  };
  auto rhs = vals(g(in.b), id);
  for (uint32_t v : vals(g(in.a), id)) {
    const Value& x = values[v];
    if (x.kind == Kind::instance) {
      CallArgs args;
      args.positional.push_back(g(in.b));
      call_method(v, in.name, args, g(in.dst), id, in.line);
      continue;
    }
    for (uint32_t r : rhs) {
      const Value& y = values[r];
      if (!literal(x) || !literal(y)) {
        add(g(in.dst), value(Kind::constant, str("bool")));
        continue;
      }
      bool same = x.a == y.a;
      add(g(in.dst), value(Kind::constant, str(same == (in.name == "__eq__") ? "True" : "False")));
    }
    if (rhs.empty()) add(g(in.dst), value(Kind::constant, str("bool")));
  }
}

void Solver::Impl::eval_binary(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module, scope = instrs[id].scope;
  auto g = [&](Var v) { return ivar(id, v); };
  [[maybe_unused]] auto read = [&](Var v) { return vals(g(v), id); };
  // x + ".so", x % "fmt" with x unknown: a str (a program's __add__ is called where x holds
  // its instance, below).
  if (in.name2 == "compare") {
    compare(id);
    return;
  }
  bool with_str = false;
  if (in.b != kNoVar && (in.name == "__add__" || in.name == "__iadd__"))
    for (uint32_t r : read(in.b))
      if (values[r].kind == Kind::constant && strings[values[r].a].rfind("str", 0) == 0) with_str = true;
  if (with_str) add(g(in.dst), value(Kind::constant, str("str")));
  for (uint32_t v : read(in.a)) {
    const Value& x = values[v];
    if (x.kind == Kind::instance) {
      CallArgs args;
      if (in.b != kNoVar) args.positional.push_back(g(in.b));
      if (!in.name.empty()) call_method(v, in.name, args, g(in.dst), id, in.line);
    } else if (x.kind == Kind::ext_instance || x.kind == Kind::constant) {
      add(g(in.dst), x.kind == Kind::constant && strings[x.a].rfind("str", 0) == 0 ? value(Kind::constant, str("str"))
                     : x.kind == Kind::constant ? value(Kind::constant, str("int"))
                                                : v);
    } else if (x.kind == Kind::klass && in.name == "__or__") {
      add(g(in.dst), v);  // X | None in an annotation
    } else if (x.kind == Kind::container && (in.name == "__add__" || in.name == "__iadd__" || in.name == "__or__" ||
                                             in.name == "__ior__")) {
      // a + b, a += b on lists (and | on dicts): the items of both.
      bool in_place = in.name[2] == 'i';
      uint32_t into = x.a;
      if (!in_place) {
        auto [it, fresh] = temps.emplace(std::make_tuple(id, 61u, v), 0);
        if (fresh) it->second = make_container(container_kinds[x.a]);
        into = it->second;
        copy_edge(all_items(x.a), any_slot(into));
      }
      if (in.b != kNoVar)
        for (uint32_t r : read(in.b)) items_of(r, any_slot(into), id, in.line);
      add(g(in.dst), value(Kind::container, into));
    } else if (!(x.kind == Kind::unknown && with_str)) {
      add(g(in.dst), value(Kind::unknown));
    }
  }
  if (in.b != kNoVar && !in.name.empty() && in.name.size() > 4)
    for (uint32_t v : read(in.b)) {
      const Value& y = values[v];
      if (y.kind == Kind::klass && in.name == "__or__") add(g(in.dst), v);
      if (y.kind != Kind::instance) continue;
      std::string reflected = "__r" + in.name.substr(2);
      bool left_has = false;
      for (uint32_t l : vals(g(in.a), id))
        if (values[l].kind == Kind::instance && find_in_mro(values[l].a, in.name, id)) left_has = true;
      if (!left_has) {
        CallArgs args;
        args.positional.push_back(g(in.a));
        call_method(v, reflected, args, g(in.dst), id, in.line);
      }
    }
}

}  // namespace sitepatch::audit::flow
