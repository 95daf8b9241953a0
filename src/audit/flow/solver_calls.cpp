// Calls: arguments into parameters (positional, keywords, *args and **kwargs both ways),
// returns into the call's variable, a class's construction (__new__, __init__ by the MRO),
// bound methods, functools.partial. Calls out of the program are recorded by name (what
// rules judge); the builtins that call back into the program (sorted's key, map, filter,
// getattr with a literal name, ...) are modelled, so the callback is an edge from the
// caller, as it runs.
#include <algorithm>

#include "audit/flow/solver_impl.hpp"
#include "audit/known_types.hpp"
#include "sitepatch/audit/rules.hpp"

namespace sitepatch::audit::flow {

namespace {

// What calling `name` (outside the program) makes: the class the standard library
// documents (logging.getLogger -> logging.Logger), the class itself for a class, else
// "name()", an object known by what made it.
std::string result_class(const std::string& name) {
  // What a result of a result makes is not named further (x = x.f() in a loop would
  // make a new name each turn): one object nobody knows.
  if (name.find("()") != std::string::npos || name[0] == '?') return "?";
  if (std::count(name.begin(), name.end(), '.') >= 6) return "?";
  std::string plain(canonical(name));
  std::string known = audit::detail::external_result(plain);
  if (!known.empty()) return known;
  if (audit::detail::external_class(plain)) return plain;
  return plain + "()";
}

}  // namespace

void Solver::Impl::call_scope(uint32_t fs, const CallArgs& args, uint32_t dst, uint32_t instr, int line,
                              std::optional<uint32_t> receiver) {
  fs = clone_for(fs, instr);
  edge(caller_scope(instr), fs, line);
  const Scope& s = scope(fs);
  auto p_var = [&](size_t k) { return svar(fs, s.params[k].var); };
  if (!s.generator && !s.coroutine) reach(fs);
  size_t p = 0;
  std::vector<char> bound(s.params.size(), 0);
  if (receiver && !s.params.empty() && s.params[0].kind == Param::positional) {
    bind_param(fs, 0, p_var(0), *receiver, true, dst);
    bound[0] = 1;
    p = 1;
  }
  int star_param = -1, star_star_param = -1;
  for (size_t k = 0; k < s.params.size(); ++k) {
    if (s.params[k].kind == Param::star) star_param = int(k);
    if (s.params[k].kind == Param::star_star) star_star_param = int(k);
  }
  // A *args or **kwargs parameter holds one container per function, whatever the call.
  auto container_for = [&](int param, Container::Kind kind) {
    auto [it, fresh] = param_containers.emplace(std::make_pair(fs, uint32_t(param)), 0);
    if (fresh) {
      it->second = make_container(kind);
      add(p_var(size_t(param)), value(Kind::container, it->second));
    }
    return it->second;
  };
  for (uint32_t a : args.positional) {
    while (p < s.params.size() && s.params[p].kind != Param::positional) ++p;
    if (p < s.params.size()) {
      bind_param(fs, uint32_t(p), p_var(p), a, false, dst);
      bound[p] = 1;
      ++p;
    } else if (star_param >= 0) {
      copy_edge(a, any_slot(container_for(star_param, Container::tuple)));
    }
  }
  for (auto& [name, a] : args.keywords) {
    bool hit = false;
    for (size_t k = 0; k < s.params.size(); ++k)
      if (s.params[k].name == name && (s.params[k].kind == Param::positional || s.params[k].kind == Param::keyword_only)) {
        bind_param(fs, uint32_t(k), p_var(k), a, false, dst);
        bound[k] = 1;
        hit = true;
      }
    if (!hit && star_star_param >= 0) copy_edge(a, slot(container_for(star_star_param, Container::dict), "str:" + name));
  }
  // *args and **kwargs at the call: their items may land in any parameter left.
  for (uint32_t a : args.star) {
    watch(a, instr);
    uint32_t items = temp(instr, 20, a);
    for (uint32_t v : vals(a, instr)) items_of(v, items, instr, line);
    for (size_t k = p; k < s.params.size(); ++k)
      if (!bound[k] && s.params[k].kind == Param::positional)
        bind_param(fs, uint32_t(k), p_var(k), items, false, dst);
    if (star_param >= 0) copy_edge(items, any_slot(container_for(star_param, Container::tuple)));
  }
  for (uint32_t a : args.star_star) {
    watch(a, instr);
    for (uint32_t v : vals(a, instr)) {
      if (values[v].kind != Kind::container) continue;
      uint32_t c = values[v].a;
      for (size_t k = 0; k < s.params.size(); ++k) {
        if (bound[k] || s.params[k].kind == Param::star || s.params[k].kind == Param::star_star) continue;
        bind_param(fs, uint32_t(k), p_var(k), slot(c, "str:" + s.params[k].name), false, dst);
        bind_param(fs, uint32_t(k), p_var(k), any_slot(c), false, dst);
      }
      if (star_star_param >= 0) copy_edge(all_items(c), any_slot(container_for(star_star_param, Container::dict)));
    }
  }
  // A parameter no argument bound takes its default.
  for (size_t k = 0; k < s.params.size(); ++k)
    if ((!bound[k] || !args.star.empty() || !args.star_star.empty()) && s.params[k].default_value != kNoVar)
      bind_param(fs, uint32_t(k), p_var(k), svar(fs, s.params[k].default_value), false, dst);
  // A generator's body runs as it is iterated (solver_lookup.cpp items_of), a coroutine's
  // as it is awaited or handed to an event loop.
  if (s.generator || s.coroutine) add(dst, value(Kind::generator, fs));
  else copy_edge(svar(fs, s.returns), dst);
  if (s.coroutine && !s.generator) reach(fs);
}

void Solver::Impl::call_method(uint32_t receiver, const std::string& name, const CallArgs& args, uint32_t dst,
                               uint32_t instr, int line) {
  const Value r = values[receiver];
  if (r.kind != Kind::instance && r.kind != Kind::klass) return;
  auto found = find_in_mro(r.a, name, instr);
  if (!found) return;
  // A method that holds no function but a class or an instance (torch 2.13's Tensor.__init__
  // holds the class Tensor; an object's __call__ may hold another object) calls that, which
  // may lead back here: the call under way binds the same arguments at the same site, so a
  // nested one adds nothing (and would not end).
  std::pair<uint32_t, uint32_t> call{receiver, str(name)};
  if (std::find(methods_calling.begin(), methods_calling.end(), call) != methods_calling.end()) return;
  methods_calling.push_back(call);
  struct Done {
    std::vector<std::pair<uint32_t, uint32_t>>& stack;
    ~Done() { stack.pop_back(); }
  } done{methods_calling};
  for (uint32_t v : vals(found->second, instr)) {
    const Value& x = values[v];
    if (x.kind != Kind::function) {
      call_value(v, args, dst, instr, line, name);
      continue;
    }
    const Scope& s = modules[scopes[x.a].module].ir.scopes[scopes[x.a].local];
    if (s.is_staticmethod) call_scope(x.a, args, dst, instr, line, std::nullopt);
    else if (s.is_classmethod) call_scope(x.a, args, dst, instr, line, value(Kind::klass, r.a));
    else call_scope(x.a, args, dst, instr, line, receiver);
  }
}

void Solver::Impl::construct(uint32_t cls, const CallArgs& args, uint32_t dst, uint32_t instr, int line,
                             bool via_metaclass) {
  uint32_t inst = value(Kind::instance, cls);
  auto [m, local] = classes[cls];
  Var meta = modules[m].ir.classes[local].metaclass;
  if (meta != kNoVar && via_metaclass) {
    watch(gvar(m, meta), instr);
    for (uint32_t mv : vals(gvar(m, meta), instr))
      if (values[mv].kind == Kind::klass && find_in_mro(values[mv].a, "__call__", instr)) {
        // Meta.__call__ runs; the __new__/__init__ it reaches through super().__call__
        // are its calls, not the constructor site's.
        auto found = find_in_mro(values[mv].a, "__call__", instr);
        for (uint32_t f : vals(found->second, instr))
          if (values[f].kind == Kind::function) call_scope(values[f].a, args, dst, instr, line, value(Kind::klass, cls));
        add(dst, inst);
        return;
      }
  }
  add(dst, inst);
  constructed.insert(cls);
  uint32_t scratch = temp(instr, 30, cls);
  if (find_in_mro(cls, "__new__", instr)) call_method(value(Kind::klass, cls), "__new__", args, scratch, instr, line);
  if (find_in_mro(cls, "__init__", instr)) {
    call_method(inst, "__init__", args, scratch, instr, line);
    return;
  }
  // A generated __init__ (a dataclass's): each field's default factory, then __post_init__.
  for (uint32_t c : mro(cls, instr)) {
    auto [cm, cl] = classes[c];
    for (Var f : modules[cm].ir.classes[cl].factories) {
      watch(gvar(cm, f), instr);
      for (uint32_t v : vals(gvar(cm, f), instr)) call_value(v, {}, scratch, instr, line, "default_factory");
    }
  }
  if (find_in_mro(cls, "__post_init__", instr)) call_method(inst, "__post_init__", {}, scratch, instr, line);
}

// getattr(module, run-time name)(...): any function or class the module binds may be the
// one called.
void Solver::Impl::call_any(uint32_t callee, const CallArgs& args, uint32_t dst, uint32_t instr, int line,
                            const std::string& text) {
  const Value x = values[callee];
  bool any = false;
  for (uint32_t v : module_values(x.a, instr)) {
    Kind k = values[v].kind;
    bool callable = k == Kind::function || k == Kind::klass || k == Kind::bound || k == Kind::partial ||
                    (k == Kind::external && callable_name(strings[values[v].a]));
    if (!callable) continue;
    any = true;
    call_value(v, args, dst, instr, line, text);
  }
  // Said at the end, once the module's names have all their values: either way the
  // target is the run's choice, so the answer is not complete.
  if (any) {
    uncalled_any.erase({instr, callee});
    called_any.emplace(std::make_pair(instr, callee), text);
  } else {
    uncalled_any.emplace(std::make_pair(instr, callee), text);
  }
}

void Solver::Impl::call_value(uint32_t callee, const CallArgs& args, uint32_t dst, uint32_t instr, int line,
                              const std::string& text, std::optional<uint32_t> receiver) {
  const Value x = values[callee];
  const Instr& in = instr_of(instr);
  switch (x.kind) {
    case Kind::function:
      if (!receiver && call_dynamo_wrapper(x.a, args, dst, instr, line)) return;
      call_scope(x.a, args, dst, instr, line, receiver);
      return;
    case Kind::bound:
      call_scope(x.a, args, dst, instr, line, x.b);
      return;
    case Kind::klass:
      if (in.name == "no-edge") add(dst, value(Kind::instance, x.a));  // `except E as e`: made elsewhere
      else construct(x.a, args, dst, instr, line);
      return;
    case Kind::instance:
      call_method(callee, "__call__", args, dst, instr, line);
      return;
    case Kind::constructor:
      construct(x.a, args, dst, instr, line, false);
      return;
    case Kind::partial: {
      auto [pm, pl] = calls[x.a];
      const Call& made = modules[pm].ir.calls[pl];
      if (made.args.empty()) return;
      CallArgs merged;
      for (size_t k = 1; k < made.args.size(); ++k) {
        const Arg& a = made.args[k];
        if (a.star == 0 && a.keyword.empty()) merged.positional.push_back(svar(x.b, a.var));
        else if (a.star == 0) merged.keywords.push_back({a.keyword, svar(x.b, a.var)});
      }
      for (uint32_t p : args.positional) merged.positional.push_back(p);
      for (auto& kw : args.keywords) merged.keywords.push_back(kw);
      merged.star = args.star;
      merged.star_star = args.star_star;
      uint32_t target = svar(x.b, made.args[0].var);
      watch(target, instr);
      for (uint32_t t : vals(target, instr)) call_value(t, merged, dst, instr, line, text);
      return;
    }
    case Kind::cmethod:
      container_method(callee, args, dst, instr, line);
      return;
    case Kind::module_any:
      call_any(callee, args, dst, instr, line, text);
      return;
    case Kind::external: {
      const std::string name = strings[x.a];
      if (call_builtin(name, args, dst, instr, line) || call_dynamo_name(name, args, dst, instr, line)) return;
      handled.insert((uint64_t(instr) << 32) | callee);
      external(caller_scope(instr), in, name, text);
      add(dst, value(Kind::ext_instance, str(result_class(name))));
      // Code out of the program may iterate a generator it is given ("".join(gen)), and
      // call a function from outside it is given (pool.submit(subprocess.run, cmd)): that
      // call is made here, for rules to judge. A constant (subprocess.PIPE) is no function.
      std::vector<uint32_t> given = args.positional;
      given.insert(given.end(), args.star.begin(), args.star.end());
      for (auto& kw : args.keywords) given.push_back(kw.second);
      for (uint32_t a : given)
        for (uint32_t v : read_var(a, instr)) {
          if (values[v].kind == Kind::generator) reach(values[v].a);
          if (values[v].kind == Kind::external && callable_name(strings[values[v].a]))
            external(caller_scope(instr), in, strings[values[v].a], text);
        }
      return;
    }
    case Kind::ext_instance:
      handled.insert((uint64_t(instr) << 32) | callee);
      external(caller_scope(instr), in, strings[x.a] + ".__call__", text);
      add(dst, value(Kind::unknown));
      return;
    case Kind::unknown:
      handled.insert((uint64_t(instr) << 32) | callee);
      not_followed(caller_scope(instr), in, text, unknown_callee(instr, text));
      add(dst, value(Kind::unknown));
      return;
    default:
      return;
  }
}

}  // namespace sitepatch::audit::flow

namespace sitepatch::audit::flow {

void Solver::Impl::class_made(uint32_t cls, uint32_t instr, int line) {
  auto [m, local] = classes[cls];
  const Class& c = modules[m].ir.classes[local];
  uint32_t made = value(Kind::klass, cls);
  uint32_t scratch = temp(instr, 31, cls);
  auto call_found = [&](uint32_t owner, const std::string& name, uint32_t receiver, uint32_t after) {
    auto found = find_in_mro(owner, name, instr, after);
    if (!found) return;
    for (uint32_t f : read_var(found->second, instr))
      if (values[f].kind == Kind::function) call_scope(values[f].a, {}, scratch, instr, line, receiver);
  };
  if (c.metaclass != kNoVar)
    for (uint32_t mv : read_var(gvar(m, c.metaclass), instr))
      if (values[mv].kind == Kind::klass) {
        call_found(values[mv].a, "__new__", mv, UINT32_MAX);
        call_found(values[mv].a, "__init__", made, UINT32_MAX);
      }
  // The nearest base's __init_subclass__ (an implicit classmethod), not the class's own.
  call_found(cls, "__init_subclass__", made, cls);
  for (auto& [name, var] : c.attrs)
    for (uint32_t v : read_var(gvar(m, var), instr))
      if (values[v].kind == Kind::instance && find_in_mro(values[v].a, "__set_name__", instr))
        call_method(v, "__set_name__", {}, scratch, instr, line);
}

}  // namespace sitepatch::audit::flow
