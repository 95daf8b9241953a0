// Each instruction's effect, evaluated whole from what its variables hold now. An
// implicit call (for's __iter__/__next__, with's __enter__/__exit__, an operator's dunder,
// a truth test's __bool__) is made only where the value is an instance of a class of the
// program that defines the method: never for literals, None, builtins or unknowns.
#include <algorithm>

#include "audit/flow/solver_impl.hpp"
#include "sitepatch/python/module.hpp"

namespace sitepatch::audit::flow {

const char* known_constant(const std::string& name) {
  if (name == "sys.platform") return "str:linux";
  if (name == "os.name") return "str:posix";
  if (name == "os.curdir") return "str:.";
  if (name == "os.pardir") return "str:..";
  if (name == "os.sep") return "str:/";
  if (name == "os.pathsep") return "str::";
  if (name == "typing.TYPE_CHECKING" || name == "typing_extensions.TYPE_CHECKING") return "False";
  if (name == "builtins.__debug__") return "True";
  if (name == "builtins.None") return "None";
  return nullptr;
}

std::vector<std::string> Solver::Impl::literal_keys(const std::string& literal, Var key, uint32_t instr) {
  if (!literal.empty()) return {literal};
  if (key == kNoVar) return {};
  std::vector<std::string> out;
  for (uint32_t v : read_var(ivar(instr, key), instr)) {
    const Value& x = values[v];
    // Literals, and keys known by identity: a class, or a name outside the program (int).
    if (x.kind == Kind::constant && strings[x.a].find(':') != std::string::npos) out.push_back(strings[x.a]);
    else if (x.kind == Kind::external) out.push_back("ext:" + strings[x.a]);
    else if (x.kind == Kind::klass) out.push_back("cls:" + std::to_string(x.a));
    else return {};
  }
  return out;
}

// x[a:] of a container: a list of its items from position a on (all of them when a is
// not known), and whatever else it was given.
void Solver::Impl::slice_of(uint32_t v, const std::string& from, uint32_t dst, uint32_t instr) {
  const Value x = values[v];
  if (x.kind != Kind::container || from.empty() || from[0] == '-') {
    add(dst, v);
    return;
  }
  auto [it, fresh] = temps.emplace(std::make_tuple(instr, 62u, v), 0);
  if (fresh) it->second = make_container(Container::list);
  size_t start = std::stoul(from);
  for (size_t k = start; has_slot(x.a, "int:" + std::to_string(k)); ++k)
    copy_edge(slot(x.a, "int:" + std::to_string(k)), any_slot(it->second));
  copy_edge(any_slot(x.a), any_slot(it->second));
  add(dst, value(Kind::container, it->second));
}

void Solver::Impl::eval_import_from(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module, scope = instrs[id].scope;
  auto g = [&](Var v) { return ivar(id, v); };
  [[maybe_unused]] auto read = [&](Var v) { return vals(g(v), id); };
  if (in.name == "builtins") {
    // A name the module never binds: a star import's, else a builtin. A star import of a
    // compiled module may bind any name but a builtin's.
    bool found = false;
    bool builtin = python::is_builtin_name(in.name2.str());
    for (auto& other : modules[m].ir.scopes[0].code)
      if (other.op == Op::star_import) {
        int sm = load(other.name);
        if (sm < 0 && !builtin && compiled_star(other.name)) {
          add(g(in.dst), star_made_value(other.name, in.name2));
          found = true;
        }
        if (sm < 0) continue;
        auto it = modules[size_t(sm)].ir.globals.find(in.name2);
        if (it == modules[size_t(sm)].ir.globals.end() || !modules[size_t(sm)].ir.exports(in.name2)) continue;
        reach_top(uint32_t(sm));
        copy_edge(gvar(uint32_t(sm), it->second), g(in.dst));
        found = true;
      }
    if (found) return;
    const char* c = known_constant("builtins." + in.name2);
    add(g(in.dst), c ? value(Kind::constant, str(c)) : value(Kind::external, str("builtins." + in.name2)));
    return;
  }
  if (in.name == "<annotation>") {
    // A string annotation: a dotted name read in this module.
    std::string head = in.name2.substr(0, in.name2.find('.'));
    auto it = modules[m].ir.globals.find(head);
    if (it == modules[m].ir.globals.end()) return;
    uint32_t at = g(it->second);
    watch(at, id);
    uint32_t cur = at;
    std::string rest = in.name2.find('.') == std::string::npos ? "" : in.name2.substr(in.name2.find('.') + 1);
    while (!rest.empty()) {
      std::string part = rest.substr(0, rest.find('.'));
      rest = rest.find('.') == std::string::npos ? "" : rest.substr(rest.find('.') + 1);
      uint32_t next = temp(id, 6, str(part + "@" + std::to_string(cur)));
      for (uint32_t v : vals(cur, id)) load_attr(v, part, next, id);
      cur = next;
    }
    copy_edge(cur, g(in.dst));
    return;
  }
  // Read when a value of it is used (vals): importing loads nothing.
  add(g(in.dst), value(Kind::lazy, str(in.name), str(in.name2)));
}

void Solver::Impl::eval_load_item(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module, scope = instrs[id].scope;
  auto g = [&](Var v) { return ivar(id, v); };
  [[maybe_unused]] auto read = [&](Var v) { return vals(g(v), id); };
  if (in.name.rfind("slice:", 0) == 0) {
    for (uint32_t v : read(in.a)) slice_of(v, in.name.substr(6), g(in.dst), id);
    return;
  }
  std::vector<std::string> keys = literal_keys(in.name, in.b, id);
  for (uint32_t v : read(in.a)) {
    const Value& x = values[v];
    if (x.kind == Kind::module) {
      for (auto& k : keys)
        if (k.rfind("str:", 0) == 0) load_attr(v, k.substr(4), g(in.dst), id);  // globals()["name"]
    } else if (x.kind == Kind::container && container_kinds[x.a] == Container::tuple && keys.empty()) {
      copy_edge(all_items(x.a), g(in.dst));
    } else if (x.kind == Kind::container) {
      if (keys.empty()) copy_edge(all_items(x.a), g(in.dst));
      for (auto& k : keys) copy_edge(slot(x.a, k), g(in.dst));
      if (!keys.empty()) copy_edge(any_slot(x.a), g(in.dst));
    } else if (x.kind == Kind::instance) {
      CallArgs args;
      if (in.b != kNoVar) args.positional.push_back(g(in.b));
      call_method(v, "__getitem__", args, g(in.dst), id, in.line);
      call_method(v, "__class_getitem__", args, g(in.dst), id, in.line);
    } else if (x.kind == Kind::klass) {
      // Optional[X], list[X], Cls[T]: an annotation's classes go through.
      CallArgs args;
      if (in.b != kNoVar) args.positional.push_back(g(in.b));
      call_method(v, "__class_getitem__", args, g(in.dst), id, in.line);
    } else if (x.kind == Kind::external && in.b != kNoVar && generic_collection(strings[x.a])) {
      // List[Path], dict[str, Path]: a collection whose items are instances of the classes named.
      annotated_collection(id, v, strings[x.a], g(in.b), g(in.dst));
    } else if (x.kind == Kind::external) {
      // typing's forms and builtin generics: their arguments are the annotation's.
      if (in.b == kNoVar) continue;
      for (uint32_t k : read(in.b)) {
        const Value& y = values[k];
        if (y.kind == Kind::container && container_kinds[y.a] == Container::tuple) copy_edge(all_items(y.a), g(in.dst));
        else add(g(in.dst), k);
      }
    } else if (x.kind == Kind::unknown || x.kind == Kind::ext_instance) {
      add(g(in.dst), value(Kind::unknown));
    }
  }
}

int generic_collection(const std::string& dotted) {
  std::string last = dotted.substr(dotted.rfind('.') + 1);
  static const char* const kItems[] = {"List", "Sequence", "Iterable", "Iterator", "Set", "FrozenSet", "Collection",
                                       "MutableSequence", "MutableSet", "Deque", "list", "set", "frozenset", "deque",
                                       "Generator", "AbstractSet"};
  static const char* const kValues[] = {"Dict", "Mapping", "MutableMapping", "DefaultDict", "OrderedDict", "dict",
                                        "defaultdict"};
  bool typing = dotted.rfind("typing.", 0) == 0 || dotted.rfind("collections.", 0) == 0 ||
                dotted.rfind("builtins.", 0) == 0;
  if (!typing) return 0;
  for (const char* k : kItems)
    if (last == k) return 1;
  for (const char* k : kValues)
    if (last == k) return 2;
  return 0;
}

void Solver::Impl::annotated_collection(uint32_t id, uint32_t generic, const std::string& name, uint32_t args,
                                        uint32_t dst) {
  auto [it, fresh] = temps.emplace(std::make_tuple(id, 62u, generic), 0);
  if (fresh) it->second = make_container(generic_collection(name) == 2 ? Container::dict : Container::list);
  uint32_t items = any_slot(it->second);
  auto as_instances = [&](uint32_t var) {
    for (uint32_t k : vals(var, id)) {
      const Value& y = values[k];
      if (y.kind == Kind::klass) add(items, value(Kind::instance, y.a));
      else if (y.kind == Kind::external) add(items, value(Kind::ext_instance, y.a));
      else if (y.kind == Kind::container) add(items, k);
    }
  };
  for (uint32_t k : vals(args, id)) {
    const Value& y = values[k];
    bool pair = y.kind == Kind::container && container_kinds[y.a] == Container::tuple;
    if (!pair) {
      if (generic_collection(name) == 1) {
        uint32_t one = temp(id, 63, k);
        add(one, k);
        as_instances(one);
      }
    } else if (generic_collection(name) == 2) {
      as_instances(slot(y.a, "int:1"));
    } else {
      as_instances(all_items(y.a));
    }
  }
  add(dst, value(Kind::container, it->second));
}

void Solver::Impl::eval_store_item(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module, scope = instrs[id].scope;
  auto g = [&](Var v) { return ivar(id, v); };
  [[maybe_unused]] auto read = [&](Var v) { return vals(g(v), id); };
  std::vector<std::string> keys = literal_keys(in.name, in.dst, id);
  for (uint32_t v : read(in.a)) {
    const Value& x = values[v];
    if (x.kind == Kind::container) {
      if (keys.empty()) copy_edge(g(in.b), any_slot(x.a));
      for (auto& k : keys) copy_edge(g(in.b), slot(x.a, k));
    } else if (x.kind == Kind::instance) {
      CallArgs args;
      args.positional.push_back(g(in.b));
      call_method(v, "__setitem__", args, temp(id, 1, v), id, in.line);
    }
  }
}

void Solver::Impl::eval_make_list(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module, scope = instrs[id].scope;
  auto g = [&](Var v) { return ivar(id, v); };
  [[maybe_unused]] auto read = [&](Var v) { return vals(g(v), id); };
  uint32_t c = modules[m].container_base + uint32_t(in.index);
  const Container& ct = modules[m].ir.containers[size_t(in.index)];
  for (size_t k = 0; k < ct.items.size(); ++k) {
    bool hashed = ct.kind == Container::set || (ct.kind == Container::dict && ct.key_vars[k] != kNoVar);
    if (hashed)  // a set's item, a dict's key: hashed
      for (uint32_t v : read(ct.kind == Container::set ? ct.items[k] : ct.key_vars[k]))
        if (values[v].kind == Kind::instance) call_method(v, "__hash__", {}, temp(id, 12, v), id, in.line);
    if (ct.starred[k]) {
      for (uint32_t v : read(ct.items[k])) items_of(v, any_slot(c), id, in.line);
    } else if (ct.kind == Container::dict) {
      std::vector<std::string> keys = literal_keys(ct.keys[k], ct.key_vars[k], id);
      if (keys.empty()) copy_edge(g(ct.items[k]), any_slot(c));
      for (auto& key : keys) copy_edge(g(ct.items[k]), slot(c, key));
    } else if (ct.kind != Container::set && std::find(ct.starred.begin(), ct.starred.begin() + long(k), 1) ==
                                                 ct.starred.begin() + long(k)) {
      // A tuple's or a literal list's items by position (until a starred one).
      copy_edge(g(ct.items[k]), slot(c, "int:" + std::to_string(k)));
    } else {
      copy_edge(g(ct.items[k]), any_slot(c));
    }
  }
  add(g(in.dst), value(Kind::container, c));
}

void Solver::Impl::eval_call(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module, scope = instrs[id].scope;
  auto g = [&](Var v) { return ivar(id, v); };
  [[maybe_unused]] auto read = [&](Var v) { return vals(g(v), id); };
  const Call& c = modules[m].ir.calls[size_t(in.index)];
  CallArgs args;
  for (auto& a : c.args) {
    // Plain arguments flow by copy edges made once; *args and **kwargs are read whole.
    if (a.star) watch(g(a.var), id);
    if (a.star == 1) args.star.push_back(g(a.var));
    else if (a.star == 2) args.star_star.push_back(g(a.var));
    else if (!a.keyword.empty()) args.keywords.push_back({a.keyword, g(a.var)});
    else args.positional.push_back(g(a.var));
  }
  auto callees = read(c.callee);
  bool plain = args.star.empty() && args.star_star.empty();
  // Import-time code of a module other than the program's runs for the names it binds:
  // its decorators and calls out of the program, not its calls of its own functions
  // (which would walk most of a library such as torch at every import).
  bool bindings_only = scopes[scope].local == 0 && !modules[m].program && in.name != "decorator";
  for (uint32_t v : callees) {
    // A callee whose effect depends on nothing that can grow was made once for all.
    if (handled.count((uint64_t(id) << 32) | v)) continue;
    if (bindings_only) {
      Kind k = values[v].kind;
      // A class still makes an instance of itself (`registry = Registry()`: its methods are
      // known), its __init__ left to that import; what anything else returns is not known.
      // Not a class with __getattr__: such a namespace (torch.ops) answers any name at run
      // time, and following each answer across torch took minutes.
      if (k == Kind::klass && !find_in_mro(values[v].a, "__getattr__", id)) {
        add(g(in.dst), value(Kind::instance, values[v].a));
        continue;
      }
      if (k == Kind::function || k == Kind::bound || k == Kind::instance || k == Kind::partial || k == Kind::klass) {
        add(g(in.dst), value(Kind::unknown));
        continue;
      }
    }
    // A function or bound method, once bound to this call's arguments, needs nothing more.
    Kind k = values[v].kind;
    if (plain && (k == Kind::function || k == Kind::bound)) handled.insert((uint64_t(id) << 32) | v);
    call_value(v, args, g(in.dst), id, in.line, c.text);
  }
}

void Solver::Impl::eval_unpack(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module, scope = instrs[id].scope;
  auto g = [&](Var v) { return ivar(id, v); };
  [[maybe_unused]] auto read = [&](Var v) { return vals(g(v), id); };
  for (uint32_t v : read(in.a)) {
    const Value& x = values[v];
    bool positional = x.kind == Kind::container &&
                      (container_kinds[x.a] == Container::tuple || container_kinds[x.a] == Container::list);
    if (positional && in.index >= 0) {
      copy_edge(slot(x.a, "int:" + std::to_string(in.index)), g(in.dst));
      copy_edge(any_slot(x.a), g(in.dst));
    } else if (in.index < 0 && positional) {
      // first, *rest = a, b, c: rest is a list of the items past the others.
      size_t slash = in.name.find('/');
      size_t at = std::stoul(in.name.substr(0, slash)), of = std::stoul(in.name.substr(slash + 1));
      auto [it, fresh] = temps.emplace(std::make_tuple(id, 60u, v), 0);
      if (fresh) it->second = make_container(Container::list);
      size_t n = 0;
      while (has_slot(x.a, "int:" + std::to_string(n))) ++n;
      for (size_t k = at; k + (of - at - 1) < n; ++k)
        copy_edge(slot(x.a, "int:" + std::to_string(k)), any_slot(it->second));
      copy_edge(any_slot(x.a), any_slot(it->second));
      add(g(in.dst), value(Kind::container, it->second));
    } else if (in.index < 0) {
      add(g(in.dst), v);
    } else {
      items_of(v, g(in.dst), id, in.line);
    }
  }
}

void Solver::Impl::eval_enter(uint32_t id) {
  const Instr& in = instr_of(id);
  [[maybe_unused]] const uint32_t m = instrs[id].module, scope = instrs[id].scope;
  auto g = [&](Var v) { return ivar(id, v); };
  [[maybe_unused]] auto read = [&](Var v) { return vals(g(v), id); };
  for (uint32_t v : read(in.a)) {
    const Value& x = values[v];
    bool aio = in.name == "async";
    if (x.kind == Kind::instance) {
      const char* enter = aio ? "__aenter__" : "__enter__";
      if (!find_in_mro(x.a, enter, id)) {
        // A subclass of a class outside the program (a lock's): its __enter__ is that class's.
        for (auto& base : external_bases(x.a, id)) external(scope, in, base + "." + enter, base);
        add(g(in.dst), v);
      }
      call_method(v, enter, {}, g(in.dst), id, in.line);
      call_method(v, aio ? "__aexit__" : "__exit__", {}, temp(id, 2, v), id, in.line);
    } else if (x.kind == Kind::generator) {
      reach(x.a);  // a contextmanager's generator runs to its yield
      copy_edge(svar(x.a, this->scope(x.a).yields), g(in.dst));
    } else if (x.kind == Kind::ext_instance) {
      external(scope, in, strings[x.a] + ".__enter__", strings[x.a]);
      add(g(in.dst), v);
    } else {
      add(g(in.dst), value(Kind::unknown));
    }
  }
}

void Solver::Impl::evaluate(uint32_t id) {
  const Site site = instrs[id];
  const Instr& in = instr_of(id);
  const uint32_t m = site.module;
  auto g = [&](Var v) { return ivar(id, v); };
  auto read = [&](Var v) { return vals(g(v), id); };  // a copy: evaluating may grow it
  const uint32_t scope = site.scope;
  switch (in.op) {
    case Op::copy:
      if (in.name == "annotation" || in.name == "annotated") {
        // An annotated parameter: instances of the annotation's classes, where no call
        // gave it a value of the program's (the entry's default among them). An annotated
        // assignment: those too.
        bool known = false;
        for (uint32_t v : in.name == "annotation" ? read(in.dst) : std::vector<uint32_t>{})
          if (values[v].kind != Kind::unknown) known = true;
        if (known) break;
        for (uint32_t v : read(in.a)) {
          const Value& x = values[v];
          if (x.kind == Kind::klass) add(g(in.dst), value(Kind::instance, x.a));
          else if (x.kind == Kind::external) add(g(in.dst), value(Kind::ext_instance, x.a));
          else if (x.kind == Kind::container) add(g(in.dst), v);
        }
        break;
      }
      copy_edge(g(in.a), g(in.dst));
      break;
    case Op::constant:
      add(g(in.dst), value(Kind::constant, str(in.name)));
      break;
    case Op::unknown:
      add(g(in.dst), value(Kind::unknown));
      break;
    case Op::function: {
      // Defaults go into the parameters a call leaves unbound (solver_calls.cpp).
      add(g(in.dst), value(Kind::function, nested_scope(scope, uint32_t(in.index))));
      break;
    }
    case Op::klass: {
      uint32_t cls = modules[m].class_base + uint32_t(in.index);
      // A library's class statement at its import binds the class; what its metaclass and
      // bases run then is that import's work, not the entry's (sympy's metaclasses, under
      // torch's import, made a walk of 3 functions hold 6 million values).
      if (scopes[instrs[id].scope].local != 0 || modules[m].program) class_made(cls, id, in.line);
      add(g(in.dst), value(Kind::klass, cls));
      break;
    }
    case Op::import:
      add(g(in.dst), value(Kind::module, str(in.name)));
      break;
    case Op::import_from:
      eval_import_from(id);
      break;
    case Op::load_attr: {
      std::string full;
      for (uint32_t v : read(in.a)) {
        const Value& x = values[v];
        if (x.kind == Kind::external) {
          const char* c = known_constant(strings[x.a] + "." + in.name);
          if (c) {
            add(g(in.dst), value(Kind::constant, str(c)));
            continue;
          }
        }
        load_attr(v, in.name, g(in.dst), id);
      }
      break;
    }
    case Op::store_attr: {
      for (uint32_t v : read(in.a)) {
        const Value& x = values[v];
        uint32_t target = UINT32_MAX;
        if (x.kind == Kind::instance) target = instance_attr(x.a, in.name);
        else if (x.kind == Kind::klass) target = class_attr_var(x.a, in.name);
        else if (x.kind == Kind::module) target = module_attr(v, in.name, id);
        if (target != UINT32_MAX) copy_edge(g(in.b), target);
      }
      break;
    }
    case Op::load_item:
      eval_load_item(id);
      break;
    case Op::store_item:
      eval_store_item(id);
      break;
    case Op::make_list:
      eval_make_list(id);
      break;
    case Op::call:
      eval_call(id);
      break;
    case Op::iterate:
      for (uint32_t v : read(in.a)) {
        if (in.name == "async" && values[v].kind == Kind::instance) {
          uint32_t it = temp(id, 10, v);
          call_method(v, "__aiter__", {}, it, id, in.line);
          for (uint32_t r : read_var(it, id))
            if (values[r].kind == Kind::instance) call_method(r, "__anext__", {}, g(in.dst), id, in.line);
            else items_of(r, g(in.dst), id, in.line);
          continue;
        }
        items_of(v, g(in.dst), id, in.line);
      }
      break;
    case Op::unpack:
      eval_unpack(id);
      break;
    case Op::enter:
      eval_enter(id);
      break;
    case Op::binary:
      eval_binary(id);
      break;
    case Op::truth:
      for (uint32_t v : read(in.a))
        if (values[v].kind == Kind::instance) {
          if (find_in_mro(values[v].a, "__bool__", id)) call_method(v, "__bool__", {}, temp(id, 3, v), id, in.line);
          else call_method(v, "__len__", {}, temp(id, 3, v), id, in.line);
        }
      break;
    case Op::implicit:
      if (in.name == "__contains__" && in.b != kNoVar)
        for (uint32_t c : read(in.a))
          if (values[c].kind == Kind::container &&
              (container_kinds[values[c].a] == Container::set || container_kinds[values[c].a] == Container::dict))
            for (uint32_t v : read(in.b))
              if (values[v].kind == Kind::instance) call_method(v, "__hash__", {}, temp(id, 11, v), id, in.line);
      for (uint32_t v : read(in.a)) {
        if (values[v].kind != Kind::instance) continue;
        std::string name = in.name;
        if (name == "__format__" && !find_in_mro(values[v].a, name, id)) name = "__str__";
        if (name == "__str__" && !find_in_mro(values[v].a, name, id)) name = "__repr__";
        call_method(v, name, {}, temp(id, 4, v), id, in.line);
      }
      break;
    case Op::ret:
      eval_return(id);
      break;
    case Op::yield: {
      copy_edge(g(in.a), svar(scope, this->scope(scope).yields));
      add(g(in.dst), value(Kind::unknown));
      break;
    }
    case Op::yield_from: {
      uint32_t ys = svar(scope, this->scope(scope).yields);
      for (uint32_t v : read(in.a)) {
        items_of(v, ys, id, in.line);
        if (values[v].kind == Kind::generator) {
          copy_edge(svar(values[v].a, this->scope(values[v].a).returns), g(in.dst));
        }
      }
      break;
    }
    case Op::await:
      for (uint32_t v : read(in.a)) {
        const Value& x = values[v];
        if (x.kind == Kind::generator) {
          reach(x.a);
          copy_edge(svar(x.a, this->scope(x.a).returns), g(in.dst));
        } else {
          add(g(in.dst), value(Kind::unknown));
        }
      }
      break;
    case Op::raise:
      for (uint32_t v : read(in.a))
        if (values[v].kind == Kind::klass) construct(values[v].a, {}, temp(id, 5, v), id, in.line);
      break;
    case Op::super_:
    case Op::star_import:
      break;
  }
}

}  // namespace sitepatch::audit::flow
