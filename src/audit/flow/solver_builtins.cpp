// The builtins and standard-library functions whose effect on values the analysis models:
// those that call what they are given (sorted's key, map, filter, max/min's key,
// functools.reduce), that read or write attributes by a literal name (getattr, setattr),
// that make containers from items (list, tuple, iter, enumerate, zip, itertools.chain),
// the decorators that return what they wrap (functools.wraps, lru_cache, cache,
// staticmethod, classmethod, contextlib.contextmanager, dataclass), super(), type(), and
// the methods of the program's lists and dicts. Anything else out of the program is a
// call by name, its result an instance of that name.
#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

namespace {

bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

}  // namespace

// getattr(x, name) with a name only the run knows: on a module of the program that binds a
// few names (a package of backends), any of them (module_any); on a module that binds many
// (torch's namespace: following every function of it is the whole library), or anything
// else, a value not known.
uint32_t Solver::Impl::any_attribute(uint32_t o) {
  constexpr size_t kAnyNames = 64;
  const Value& x = values[o];
  int m = x.kind == Kind::module ? load(strings[x.a]) : -1;
  if (m < 0 || modules[size_t(m)].ir.globals.size() > kAnyNames) return value(Kind::unknown);
  return value(Kind::module_any, x.a);
}

bool Solver::Impl::call_builtin(const std::string& name, const CallArgs& args, uint32_t dst, uint32_t instr,
                                int line) {
  auto arg = [&](size_t k) -> std::optional<uint32_t> {
    if (k < args.positional.size()) return args.positional[k];
    return std::nullopt;
  };
  auto keyword = [&](const std::string& k) -> std::optional<uint32_t> {
    for (auto& [n, v] : args.keywords)
      if (n == k) return v;
    return std::nullopt;
  };
  auto held = [&](uint32_t var) { return vals(var, instr); };
  // Calls `fn` (every value of a variable) with each item of `items` (a variable of iterables).
  auto call_with_items = [&](uint32_t fn, const std::vector<uint32_t>& iterables, uint32_t result) {
    CallArgs one;
    for (size_t k = 0; k < iterables.size(); ++k) {
      uint32_t item = temp(instr, 40 + uint32_t(k), iterables[k]);
      for (uint32_t v : held(iterables[k])) items_of(v, item, instr, line);
      one.positional.push_back(item);
    }
    for (uint32_t f : held(fn)) call_value(f, one, result, instr, line, "callback");
  };
  auto new_list = [&](uint32_t tag) {
    auto [it, fresh] = temps.emplace(std::make_tuple(instr, 50u, tag), 0);
    if (fresh) it->second = make_container(Container::list);
    add(dst, value(Kind::container, it->second));
    return any_slot(it->second);
  };

  if (name == "builtins.property.setter" || name == "builtins.property.getter" ||
      name == "builtins.property.deleter") {
    if (arg(0)) copy_edge(*arg(0), dst);
    return true;
  }
  if (name == "builtins.getattr" || name == "builtins.setattr" || name == "builtins.hasattr" ||
      name == "builtins.delattr") {
    if (!arg(0) || !arg(1)) return true;
    bool any_name = false;
    for (uint32_t k : held(*arg(1))) {
      const std::string& c = strings[values[k].a];
      if (values[k].kind != Kind::constant || c.rfind("str:", 0) != 0) {
        any_name = true;
        continue;
      }
      std::string attr = c.substr(4);
      for (uint32_t o : held(*arg(0))) {
        if (name == "builtins.getattr") {
          load_attr(o, attr, dst, instr);
        } else if (name == "builtins.setattr" && arg(2)) {
          const Value& x = values[o];
          if (x.kind == Kind::instance) copy_edge(*arg(2), instance_attr(x.a, attr));
          else if (x.kind == Kind::klass) copy_edge(*arg(2), class_attr_var(x.a, attr));
          else if (x.kind == Kind::module) copy_edge(*arg(2), module_attr(o, attr, instr));
        }
      }
    }
    if (name == "builtins.getattr") {
      if (arg(2)) copy_edge(*arg(2), dst);
      // A name only the run knows: on a module of the program, any of its attributes
      // (module_any); on anything else, a value not known.
      if (any_name)
        for (uint32_t o : held(*arg(0))) add(dst, any_attribute(o));
    }
    if (name == "builtins.hasattr") add(dst, value(Kind::constant, str("bool")));
    return true;
  }
  if (one_of(name, {"builtins.sorted", "builtins.max", "builtins.min", "builtins.filter", "builtins.map",
                    "functools.reduce", "builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset",
                    "builtins.iter", "builtins.reversed", "builtins.next", "builtins.enumerate", "builtins.zip",
                    "builtins.sum", "builtins.any", "builtins.all", "itertools.chain", "itertools.chain.from_iterable"})) {
    if (name == "builtins.map") {
      if (!arg(0)) return true;
      std::vector<uint32_t> its(args.positional.begin() + 1, args.positional.end());
      call_with_items(*arg(0), its, new_list(0));
      return true;
    }
    if (name == "builtins.filter" || name == "functools.reduce") {
      if (!arg(0) || !arg(1)) return true;
      uint32_t items = temp(instr, 41, *arg(1));
      for (uint32_t v : held(*arg(1))) items_of(v, items, instr, line);
      CallArgs two;
      two.positional = {items, items};
      if (name == "builtins.filter") two.positional.pop_back();
      for (uint32_t f : held(*arg(0))) call_value(f, two, temp(instr, 42), instr, line, "callback");
      if (name == "builtins.filter") copy_edge(items, new_list(0));
      else copy_edge(temp(instr, 42), dst);
      return true;
    }
    if (name == "itertools.chain" || name == "itertools.chain.from_iterable") {
      uint32_t out = new_list(0);
      std::vector<uint32_t> sources = args.positional;
      uint32_t outer = temp(instr, 43);
      for (uint32_t s : args.star) for (uint32_t v : held(s)) items_of(v, outer, instr, line);
      if (name == "itertools.chain.from_iterable" && arg(0))
        for (uint32_t v : held(*arg(0))) items_of(v, outer, instr, line);
      sources.push_back(outer);
      for (uint32_t s : sources)
        for (uint32_t v : held(s)) items_of(v, out, instr, line);
      return true;
    }
    if (!arg(0) && args.star.empty()) {
      if (one_of(name, {"builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset"})) new_list(0);
      return true;
    }
    uint32_t first = arg(0) ? *arg(0) : args.star[0];
    uint32_t items = temp(instr, 44, first);
    for (uint32_t v : held(first)) items_of(v, items, instr, line);
    if (auto key = keyword("key")) {
      CallArgs one;
      one.positional.push_back(items);
      for (uint32_t f : held(*key)) call_value(f, one, temp(instr, 45), instr, line, "key");
    }
    if (name == "builtins.next" || name == "builtins.max" || name == "builtins.min") {
      copy_edge(items, dst);
      if (name == "builtins.next" && arg(1)) copy_edge(*arg(1), dst);
    } else if (name == "builtins.enumerate" || name == "builtins.zip") {
      auto [it, fresh] = temps.emplace(std::make_tuple(instr, 51u, 0u), 0);
      if (fresh) it->second = make_container(Container::tuple);
      uint32_t pair = it->second;
      if (name == "builtins.enumerate") {
        add(slot(pair, "int:0"), value(Kind::constant, str("int")));
        copy_edge(items, slot(pair, "int:1"));
      } else {
        for (size_t k = 0; k < args.positional.size(); ++k) {
          uint32_t each = temp(instr, 46, uint32_t(k));
          for (uint32_t v : held(args.positional[k])) items_of(v, each, instr, line);
          copy_edge(each, slot(pair, "int:" + std::to_string(k)));
        }
      }
      add(new_list(1), value(Kind::container, pair));
    } else if (one_of(name, {"builtins.sum", "builtins.any", "builtins.all"})) {
      add(dst, value(Kind::constant, str(name == "builtins.sum" ? "int" : "bool")));
    } else {
      copy_edge(items, new_list(0));
    }
    return true;
  }
  if (one_of(name, {"builtins.len", "builtins.str", "builtins.repr", "builtins.bool", "builtins.hash",
                    "builtins.print", "builtins.format", "builtins.int", "builtins.float"})) {
    const char* dunder = name == "builtins.len" ? "__len__" : name == "builtins.repr" ? "__repr__"
                         : name == "builtins.bool" ? "__bool__" : name == "builtins.hash" ? "__hash__"
                         : name == "builtins.int" ? "__int__" : name == "builtins.float" ? "__float__" : "__str__";
    std::vector<uint32_t> targets = args.positional;
    if (name != "builtins.print" && targets.size() > 1) targets.resize(1);
    for (uint32_t t : targets)
      for (uint32_t v : held(t)) {
        if (values[v].kind != Kind::instance) continue;
        std::string d = dunder;
        if (d == "__str__" && !find_in_mro(values[v].a, d, instr)) d = "__repr__";
        if (d == "__bool__" && !find_in_mro(values[v].a, d, instr)) d = "__len__";
        call_method(v, d, {}, temp(instr, 47, v), instr, line);
      }
    if (name == "builtins.print") external(caller_scope(instr), instr_of(instr), name, "print");
    add(dst, value(Kind::constant, str(name == "builtins.len" || name == "builtins.hash" || name == "builtins.int"
                                           ? "int"
                                       : name == "builtins.bool" ? "bool"
                                       : name == "builtins.float" ? "float" : "str")));
    return true;
  }
  if (one_of(name, {"functools.wraps", "functools.lru_cache", "functools.cache", "functools.cached_property",
                    "builtins.staticmethod", "builtins.classmethod", "builtins.property",
                    "contextlib.contextmanager", "contextlib.asynccontextmanager", "dataclasses.dataclass",
                    "functools.total_ordering", "typing.final", "typing.overload", "abc.abstractmethod",
                    "typing.no_type_check", "functools.singledispatch", "atexit.register", "<identity>"})) {
    // A decorator that hands back what it is given (or, called with options first, a
    // decorator that does).
    bool options = args.positional.empty() || name == "functools.wraps";
    if (options) {
      add(dst, value(Kind::external, str("<identity>")));
    } else {
      // lru_cache(1), lru_cache(None): a constant first is its maxsize, an option.
      for (uint32_t v : held(args.positional[0]))
        add(dst, values[v].kind == Kind::constant ? value(Kind::external, str("<identity>")) : v);
    }
    if (name == "atexit.register") external(caller_scope(instr), instr_of(instr), name, "atexit.register");
    return true;
  }
  if (name == "functools.partial") {
    if (!arg(0)) return true;
    uint32_t m = instrs[instr].module;
    // b: the scope whose variables its arguments are (a clone's own).
    add(dst, value(Kind::partial, modules[m].call_base + uint32_t(instr_of(instr).index), caller_scope(instr)));
    return true;
  }
  if (name == "builtins.super") {
    uint32_t fs = caller_scope(instr);
    const uint32_t m = scopes[fs].module, local = scopes[fs].local;
    if (args.positional.size() >= 2) {
      for (uint32_t c : held(args.positional[0]))
        for (uint32_t r : held(args.positional[1]))
          if (values[c].kind == Kind::klass) add(dst, value(Kind::super_, values[c].a, r));
      return true;
    }
    // The class whose body defines the function (a nested function's: its parent's).
    const Scope* s = &modules[m].ir.scopes[local];
    uint32_t owner = local;
    while (s->cls < 0 && s->parent > 0) {
      owner = uint32_t(s->parent);
      s = &modules[m].ir.scopes[owner];
    }
    if (s->cls < 0 || s->params.empty()) return true;
    uint32_t cls = modules[m].class_base + uint32_t(s->cls);
    for (uint32_t r : held(svar(fs, s->params[0].var))) add(dst, value(Kind::super_, cls, r));
    return true;
  }
  if (name == "builtins.type" && args.positional.size() == 1) {
    for (uint32_t v : held(args.positional[0])) {
      const Value& x = values[v];
      if (x.kind == Kind::instance) {
        add(dst, value(Kind::klass, x.a));
      } else if (x.kind == Kind::constant) {
        const std::string& c = strings[x.a];
        std::string t = c.substr(0, c.find(':'));
        if (t == "None") add(dst, value(Kind::external, str("builtins.NoneType")));
        else if (t == "True" || t == "False" || t == "bool") add(dst, value(Kind::external, str("builtins.bool")));
        else if (t == "str" || t == "int" || t == "float" || t == "bytes")
          add(dst, value(Kind::external, str("builtins." + t)));
        else add(dst, value(Kind::unknown));
      } else if (x.kind == Kind::ext_instance) {
        add(dst, value(Kind::external, x.a));
      } else {
        add(dst, value(Kind::unknown));
      }
    }
    return true;
  }
  if (name == "builtins.isinstance" || name == "builtins.issubclass" || name == "builtins.callable") {
    add(dst, value(Kind::constant, str("bool")));
    return true;
  }
  if (name == "builtins.dict") {
    auto [it, fresh] = temps.emplace(std::make_tuple(instr, 52u, 0u), 0);
    if (fresh) it->second = make_container(Container::dict);
    for (auto& [k, v] : args.keywords) copy_edge(v, slot(it->second, "str:" + k));
    add(dst, value(Kind::container, it->second));
    return true;
  }
  if (name == "builtins.vars" || name == "builtins.globals" || name == "builtins.locals" ||
      name == "builtins.eval" || name == "builtins.exec" || name == "builtins.__import__" ||
      name == "importlib.import_module") {
    if ((name == "importlib.import_module" || name == "builtins.__import__") && arg(0)) {
      for (uint32_t k : held(*arg(0))) {
        const std::string& c = strings[values[k].a];
        if (values[k].kind == Kind::constant && c.rfind("str:", 0) == 0) {
          std::string mod = c.substr(4);
          if (name == "builtins.__import__") mod = mod.substr(0, mod.find('.'));
          add(dst, value(Kind::module, str(mod)));
          if (load(c.substr(4)) >= 0) reach_top(uint32_t(load(c.substr(4))));
        } else {
          add(dst, value(Kind::unknown));
        }
      }
      external(caller_scope(instr), instr_of(instr), name, name);
      return true;
    }
    if (name == "builtins.globals") {
      add(dst, value(Kind::module, str(modules[instrs[instr].module].ir.name)));
      return true;
    }
    external(caller_scope(instr), instr_of(instr), name, name);
    not_followed(caller_scope(instr), instr_of(instr), name.substr(name.find('.') + 1),
                 "code the program makes at run time");
    add(dst, value(Kind::unknown));
    return true;
  }
  return false;
}

bool moves_items(const std::string& name) {
  static const char* const kMoving[] = {"append", "add",    "appendleft", "insert", "extend",
                                        "update", "get",    "pop",        "setdefault", "__getitem__",
                                        "values", "keys",   "items",      "copy",   "popitem"};
  for (const char* k : kMoving)
    if (name == k) return true;
  return false;
}

bool Solver::Impl::container_method(uint32_t cm, const CallArgs& args, uint32_t dst, uint32_t instr, int line) {
  const Value x = values[cm];
  const Value recv = values[x.a];
  const std::string& name = strings[x.b];
  if (recv.kind == Kind::constant) {
    // str.startswith/endswith of a literal by literals (a str or a tuple of them).
    const std::string text = strings[recv.a].substr(4);
    std::vector<std::string> affixes;
    bool known = !args.positional.empty();
    for (uint32_t a : known ? vals(args.positional[0], instr) : std::vector<uint32_t>{}) {
      const Value& y = values[a];
      if (y.kind == Kind::constant && strings[y.a].rfind("str:", 0) == 0) {
        affixes.push_back(strings[y.a].substr(4));
      } else if (y.kind == Kind::container && container_kinds[y.a] == Container::tuple) {
        for (uint32_t item : vals(all_items(y.a), instr))
          if (values[item].kind == Kind::constant && strings[values[item].a].rfind("str:", 0) == 0)
            affixes.push_back(strings[values[item].a].substr(4));
          else
            known = false;
      } else {
        known = false;
      }
    }
    if (!known || affixes.empty() || args.positional.size() > 1) {
      add(dst, value(Kind::constant, str("bool")));
      return true;
    }
    for (auto& a : affixes) {
      bool hit = a.size() <= text.size() &&
                 (name == "startswith" ? text.compare(0, a.size(), a) == 0
                                       : text.compare(text.size() - a.size(), a.size(), a) == 0);
      add(dst, value(Kind::constant, str(hit ? "True" : "False")));
    }
    return true;
  }
  if (recv.kind == Kind::generator) {
    reach(recv.a);
    const Scope& body = scope(recv.a);
    if (name == "send" && !args.positional.empty() && body.sent != kNoVar)
      copy_edge(args.positional[0], svar(recv.a, body.sent));
    if (name != "close") copy_edge(svar(recv.a, body.yields), dst);
    return true;
  }
  if (recv.kind == Kind::module) {
    // globals() read as a dict: its names.
    if ((name == "get" || name == "__getitem__") && !args.positional.empty()) {
      for (uint32_t k : vals(args.positional[0], instr)) {
        const std::string& c = strings[values[k].a];
        if (values[k].kind == Kind::constant && c.rfind("str:", 0) == 0) load_attr(x.a, c.substr(4), dst, instr);
      }
    }
    return true;
  }
  // A method of a container that moves no items (moves_items): nothing to do.
  if (recv.kind != Kind::container) return true;
  uint32_t c = recv.a;
  auto key_of = [&](uint32_t var) -> std::string {
    for (uint32_t k : vals(var, instr))
      if (values[k].kind == Kind::constant && strings[values[k].a].find(':') != std::string::npos)
        return strings[values[k].a];
    return {};
  };
  if (name == "append" || name == "add" || name == "appendleft") {
    for (uint32_t a : args.positional) copy_edge(a, any_slot(c));
  } else if (name == "insert" && args.positional.size() >= 2) {
    copy_edge(args.positional[1], any_slot(c));
  } else if (name == "extend" || name == "update") {
    for (uint32_t a : args.positional) {
      watch(a, instr);
      for (uint32_t v : vals(a, instr)) {
        if (name == "update" && values[v].kind == Kind::container) {
          for (auto [k, slotvar] : std::vector<std::pair<uint32_t, uint32_t>>(slots_of[values[v].a]))
            copy_edge(slotvar, slot(c, strings[k]));
        } else {
          items_of(v, any_slot(c), instr, line);
        }
      }
    }
    for (auto& [k, v] : args.keywords) copy_edge(v, slot(c, "str:" + k));
  } else if (name == "get" || name == "pop" || name == "setdefault" || name == "__getitem__") {
    if (!args.positional.empty()) {
      watch(args.positional[0], instr);
      std::string key = key_of(args.positional[0]);
      if (container_kinds[c] != Container::dict || key.empty()) copy_edge(all_items(c), dst);
      else {
        copy_edge(slot(c, key), dst);
        copy_edge(any_slot(c), dst);
      }
      if (args.positional.size() >= 2) {
        copy_edge(args.positional[1], dst);
        if (name == "setdefault") copy_edge(args.positional[1], key.empty() ? any_slot(c) : slot(c, key));
      }
    } else {
      copy_edge(all_items(c), dst);
    }
  } else if (name == "values" || name == "keys" || name == "items") {
    add(dst, value(Kind::view, c, name == "keys" ? 0 : name == "values" ? 1 : 2));
  } else if (name == "copy") {
    add(dst, x.a);
  } else if (name == "popitem") {
    items_of(value(Kind::view, c, 2), dst, instr, line);
  }
  return true;
}

}  // namespace sitepatch::audit::flow
