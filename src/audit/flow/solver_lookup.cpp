// Attributes and items: a module's names (its top level reached the first time one is
// read; a name it does not bind may be its submodule), a class's through its C3 MRO, an
// instance's own (one variable per class and name) before its class's, functions bound
// to the receiver they were read from; a container's items by literal key or position.
#include <algorithm>

#include "audit/flow/solver_impl.hpp"
#include "audit/known_types.hpp"

namespace sitepatch::audit::flow {

// `base.name`, unless that grows a name without end (x = x.parent in a loop over a
// value outside the program): past a few segments, one unknown object's attribute.
std::string dotted(const std::string& base, const std::string& name) {
  // What no rule can name (an attribute of an unknown result, a long chain): one object
  // outside the program, "?", whatever the attribute, so the values stay few.
  if (base[0] == '?' || base.find("()") != std::string::npos || std::count(base.begin(), base.end(), '.') >= 5)
    return "?";
  return base + "." + name;
}

uint32_t Solver::Impl::module_attr(uint32_t module_value, const std::string& name, uint32_t instr) {
  (void)instr;
  auto key = std::make_pair(module_value, str(name));
  auto it = module_attrs.find(key);
  if (it != module_attrs.end()) return it->second;
  uint32_t v = new_var();
  module_attrs[key] = v;
  return v;
}

uint32_t Solver::Impl::class_attr_var(uint32_t cls, const std::string& name) {
  auto key = std::make_pair(cls, str(name));
  auto it = class_attrs.find(key);
  if (it != class_attrs.end()) return it->second;
  uint32_t v = new_var();
  class_attrs[key] = v;
  return v;
}

uint32_t Solver::Impl::instance_attr(uint32_t cls, const std::string& name) {
  auto key = std::make_pair(cls, str(name));
  auto it = instance_attrs.find(key);
  if (it != instance_attrs.end()) return it->second;
  uint32_t v = new_var();
  instance_attrs[key] = v;
  return v;
}

// C3 linearization of the program's classes (bases outside the program end it), kept
// until some class's bases grow.
std::vector<uint32_t> Solver::Impl::mro(uint32_t cls, uint32_t instr) {
  std::vector<uint32_t> consulted;
  auto order = compute_mro(cls, consulted, 0, instr);
  for (uint32_t v : mro_cache[cls].base_vars) watch(v, instr);
  return order;
}

// Each class's MRO once per epoch (its bases' from the cache): linear in the hierarchy.
std::vector<uint32_t> Solver::Impl::compute_mro(uint32_t cls, std::vector<uint32_t>& consulted, int depth,
                                                uint32_t instr) {
  auto hit = mro_cache.find(cls);
  if (hit != mro_cache.end() && hit->second.epoch == bases_epoch) {
    consulted.insert(consulted.end(), hit->second.base_vars.begin(), hit->second.base_vars.end());
    return hit->second.order;
  }
  auto [m, local] = classes[cls];
  const Class& c = modules[m].ir.classes[local];
  if (depth > 50) return {cls};
  std::vector<uint32_t> mine;
  std::vector<uint32_t> bases;
  for (Var b : c.bases) {
    uint32_t bv = gvar(m, b);
    for (uint32_t v : vals(bv, instr, &mine))
      if (values[v].kind == Kind::klass && values[v].a != cls &&
          std::find(bases.begin(), bases.end(), values[v].a) == bases.end())
        bases.push_back(values[v].a);
  }
  std::vector<std::vector<uint32_t>> seqs;
  for (uint32_t b : bases) seqs.push_back(compute_mro(b, mine, depth + 1, instr));
  seqs.push_back(bases);
  std::vector<uint32_t> out{cls};
  while (true) {
    seqs.erase(std::remove_if(seqs.begin(), seqs.end(), [](auto& s) { return s.empty(); }), seqs.end());
    if (seqs.empty()) break;
    bool picked = false;
    for (auto& s : seqs) {
      uint32_t head = s.front();
      bool in_tail = std::any_of(seqs.begin(), seqs.end(),
                                 [&](auto& t) { return std::find(t.begin() + 1, t.end(), head) != t.end(); });
      if (in_tail) continue;
      out.push_back(head);
      for (auto& t : seqs)
        if (!t.empty() && t.front() == head) t.erase(t.begin());
      picked = true;
      break;
    }
    if (!picked) {  // no consistent order (Python raises): take the rest as written
      for (auto& s : seqs)
        for (uint32_t x : s)
          if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
      break;
    }
  }
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  consulted.insert(consulted.end(), mine.begin(), mine.end());
  // A base read through `from m import B` is in a variable of its own: its growth must
  // make this order stale too.
  base_vars.insert(mine.begin(), mine.end());
  mro_cache.insert_or_assign(cls, MroCache{bases_epoch, out, std::move(mine)});
  return out;
}

std::vector<std::string> Solver::Impl::external_bases(uint32_t cls, uint32_t instr) {
  std::vector<std::string> out;
  for (uint32_t c : mro(cls, instr)) {
    auto [m, local] = classes[c];
    for (Var b : modules[m].ir.classes[local].bases)
      for (uint32_t v : vals(gvar(m, b), instr))
        if (values[v].kind == Kind::external) out.push_back(strings[values[v].a]);
  }
  return out;
}

// The class in `cls`'s MRO (after `after`, for super()) whose body binds `name`, and the
// variable holding it.
std::optional<std::pair<uint32_t, uint32_t>> Solver::Impl::find_in_mro(uint32_t cls, const std::string& name,
                                                                        uint32_t instr, uint32_t after) {
  auto order = mro(cls, instr);
  size_t start = 0;
  if (after != UINT32_MAX) {
    auto it = std::find(order.begin(), order.end(), after);
    start = it == order.end() ? order.size() : size_t(it - order.begin()) + 1;
  }
  uint32_t n = str(name);
  for (size_t k = start; k < order.size(); ++k) {
    auto it = class_attrs.find({order[k], n});
    if (it != class_attrs.end()) {
      watch(it->second, instr);
      return std::make_pair(order[k], it->second);
    }
  }
  return std::nullopt;
}

// The values of `attr_var` as read through `receiver`: functions bound to it (an
// instance's methods; a class's classmethods), properties called.
void Solver::Impl::bind_into(uint32_t attr_var, uint32_t receiver, bool via_instance, uint32_t dst, uint32_t instr,
                             int line) {
  watch(attr_var, instr);
  for (uint32_t v : vals(attr_var, instr)) {
    const Value& x = values[v];
    if (x.kind == Kind::instance && find_in_mro(x.a, "__get__", instr)) {
      call_method(v, "__get__", {}, dst, instr, line);  // a descriptor
      continue;
    }
    if (x.kind != Kind::function) {
      add(dst, v);
      continue;
    }
    const Scope& s = modules[scopes[x.a].module].ir.scopes[scopes[x.a].local];
    if (s.is_staticmethod) {
      add(dst, v);
    } else if (s.is_classmethod) {
      uint32_t cls = values[receiver].kind == Kind::instance ? value(Kind::klass, values[receiver].a) : receiver;
      add(dst, value(Kind::bound, x.a, cls));
    } else if (s.is_property && via_instance) {
      call_scope(x.a, {}, dst, instr, line, receiver);
    } else if (via_instance) {
      add(dst, value(Kind::bound, x.a, receiver));
    } else {
      add(dst, v);
    }
  }
}

// A module's attribute: what its code binds, its submodule, what a star import gives (a
// compiled module's names said as such), else its PEP 562 __getattr__'s answer.
void Solver::Impl::load_module_attr(uint32_t v, const std::string& name, uint32_t dst, uint32_t instr, int line) {
  const std::string mod = strings[values[v].a];
  int m = load(mod);
  if (m < 0) {
    const char* c = known_constant(mod + "." + name);
    add(dst, c ? value(Kind::constant, str(c)) : value(Kind::external, str(mod + "." + name)));
    return;
  }
  reach_top(uint32_t(m));
  auto it = modules[size_t(m)].ir.globals.find(name);
  uint32_t var = module_attr(v, name, instr);
  copy_edge(var, dst);
  // Its submodule (importing it sets the attribute, whatever the code binds: torch's
  // `from torch import xpu as xpu` binds the name to the submodule itself).
  bool sub = load(mod + "." + name) >= 0;
  if (sub) add(dst, value(Kind::module, str(mod + "." + name)));
  if (it == modules[size_t(m)].ir.globals.end()) {
    // Not bound by the module's code: a star import's name, or its __getattr__'s.
    bool from_compiled = false, from_source = false;
    if (!sub) {
      // A star import of source that binds it gives it; else a C extension's star
      // import did, if anything did: never __getattr__.
      std::vector<std::string> compiled;
      for (auto& other : modules[size_t(m)].ir.scopes[0].code) {
        if (other.op != Op::star_import) continue;
        int sm = load(other.name);
        if (sm < 0 && compiled_star(other.name)) {
          compiled.push_back(other.name);
        } else if (sm < 0 || (modules[size_t(sm)].ir.exports(name) && modules[size_t(sm)].ir.globals.count(name))) {
          load_attr(value(Kind::module, str(other.name)), name, dst, instr);
          from_source = from_source || sm >= 0;
        }
      }
      for (auto& c : from_source ? std::vector<std::string>{} : compiled) {
        add(dst, star_made_value(c, name));
        from_compiled = true;
      }
      // What no code here binds may still be there: a compiled submodule (torch._C).
      if (!from_compiled && !from_source) add(dst, value(Kind::external, str(mod + "." + name)));
    }
    if (!from_compiled && !from_source) {
      // PEP 562: a module's __getattr__ answers the names it does not bind.
      auto ga = modules[size_t(m)].ir.globals.find("__getattr__");
      if (ga != modules[size_t(m)].ir.globals.end()) {
        uint32_t fn = gvar(uint32_t(m), ga->second);
        watch(fn, instr);
        getattr_made.emplace(dst, mod + "." + name + " is made at run time by " + mod + ":__getattr__ (a lazy export)");
        CallArgs args;
        uint32_t nv = temp(instr, 9, str(name));
        add(nv, value(Kind::constant, str("str:" + name)));
        args.positional.push_back(nv);
        for (uint32_t f : vals(fn, instr)) call_value(f, args, dst, instr, line, "__getattr__");
      }
    }
  }
}

std::vector<uint32_t> Solver::Impl::module_values(uint32_t name, uint32_t instr) {
  std::vector<uint32_t> out;
  int m = load(strings[name]);
  if (m < 0) return out;
  reach_top(uint32_t(m));
  std::vector<Var> globals;
  for (auto& [_, var] : modules[size_t(m)].ir.globals) globals.push_back(var);
  for (Var var : globals)
    for (uint32_t v : vals(gvar(uint32_t(m), var), instr))
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

// getattr(module, run-time name).attr: device_module = getattr(torch, backend);
// device_module.is_available() is the name of each submodule (or class) the module binds
// that defines it.
void Solver::Impl::load_any_attr(uint32_t module, const std::string& name, uint32_t dst, uint32_t instr) {
  bool found = false;
  for (uint32_t o : module_values(module, instr)) {
    const Value& y = values[o];
    int sm = y.kind == Kind::module ? load(strings[y.a]) : -1;
    bool defines = (sm >= 0 && modules[size_t(sm)].ir.globals.count(name)) ||
                   (y.kind == Kind::klass && find_in_mro(y.a, name, instr));
    if (!defines) continue;
    found = true;
    load_attr(o, name, dst, instr);
  }
  // Said at the end (when nothing reaches the call), once the names have their values.
  if (!found)
    getattr_made.emplace(dst, "an attribute of " + strings[module] + " named only at run time: no submodule " +
                                  strings[module] + " imports defines " + name);
}

// An instance's attribute: what was stored on it, else its class's (bound), else a guess at
// a base from outside, else what its __getattr__ makes.
void Solver::Impl::load_instance_attr(uint32_t v, const std::string& name, uint32_t dst, uint32_t instr, int line) {
  const Value x = values[v];
  copy_edge(instance_attr(x.a, name), dst);
  if (auto found = find_in_mro(x.a, name, instr)) {
    bind_into(found->second, v, true, dst, instr, line);
    dispatch_abstract(x.a, name, found->second, dst, instr, line);
    return;
  }
  if (name == "__class__") {
    add(dst, value(Kind::klass, x.a));
    return;
  }
  auto ext = external_bases(x.a, instr);
  if (!ext.empty()) {
    // Not the program's: its base from outside may define it, or nothing does.
    uint32_t guess = str(ext[0] + "." + name);
    inherited_guesses.insert(guess);
    add(dst, value(Kind::external, guess));
  }
  auto ga = find_in_mro(x.a, "__getattr__", instr);
  if (!ga) return;
  auto [cm, cl] = classes[x.a];
  auto [gm, gl] = classes[ga->first];
  const std::string& cq = modules[cm].ir.classes[cl].qualified;
  getattr_made.emplace(dst, modules[cm].ir.name + "." + cq + "." + name + " is made at run time by " +
                                modules[gm].ir.name + ":" + modules[gm].ir.classes[gl].qualified + ".__getattr__");
  CallArgs args;
  uint32_t nv = temp(instr, 7, str(name));
  add(nv, value(Kind::constant, str("str:" + name)));
  args.positional.push_back(nv);
  call_method(v, "__getattr__", args, dst, instr, line);
}

void Solver::Impl::load_attr(uint32_t v, const std::string& name, uint32_t dst, uint32_t instr) {
  const Value x = values[v];
  int line = instr == kNoInstr ? 0 : instr_of(instr).line;
  switch (x.kind) {
    case Kind::module:
      load_module_attr(v, name, dst, instr, line);
      return;
    case Kind::klass:
      if (auto found = find_in_mro(x.a, name, instr)) bind_into(found->second, v, false, dst, instr, line);
      else if (name == "__name__" || name == "__qualname__") add(dst, value(Kind::constant, str("str")));
      else {
        auto ext = external_bases(x.a, instr);
        if (!ext.empty()) add(dst, value(Kind::external, str(ext[0] + "." + name)));
      }
      return;
    case Kind::instance:
      load_instance_attr(v, name, dst, instr, line);
      return;
    case Kind::super_: {
      const Value r = values[x.b];
      uint32_t cls = r.kind == Kind::instance || r.kind == Kind::klass ? r.a : x.a;
      if (r.kind == Kind::klass) {
        auto order = mro(r.a, instr);
        if (std::find(order.begin(), order.end(), x.a) == order.end()) {
          // super() in a metaclass's method: the receiver is a class, the MRO the metaclass's;
          // type.__call__ past it makes the instance.
          if (auto found = find_in_mro(x.a, name, instr, x.a)) bind_into(found->second, x.b, true, dst, instr, line);
          else if (name == "__call__") add(dst, value(Kind::constructor, r.a));
          return;
        }
      }
      if (auto found = find_in_mro(cls, name, instr, x.a)) {
        bind_into(found->second, x.b, r.kind == Kind::instance, dst, instr, line);
      } else {
        // Past the program's classes: a base from outside (Exception.__init__), else object's.
        auto ext = external_bases(cls, instr);
        add(dst, value(Kind::external, str((ext.empty() ? std::string("builtins.object") : ext[0]) + "." + name)));
      }
      return;
    }
    case Kind::container:
    case Kind::view:
      // Only the methods that move a container's items need their receiver; any other
      // name's method does nothing when called, whatever its container, so it is one value
      // per name. Else getattr(x, name), x any of 272 containers and name any of 99
      // strings, made 6,354 values that filled torch._dynamo's parameters: 12.4 of the 14
      // million held by get_cpp_compiler's walk.
      add(dst, value(Kind::cmethod, x.kind == Kind::container && moves_items(name) ? v : value(Kind::unknown),
                     str(name)));
      return;
    case Kind::module_any:
      load_any_attr(x.a, name, dst, instr);
      return;
    case Kind::function:
      if (name == "__name__" || name == "__qualname__") {
        const std::string& q = scope(x.a).qualified;
        add(dst, value(Kind::constant, str("str:" + q.substr(q.rfind('.') == std::string::npos ? 0 : q.rfind('.') + 1))));
      }
      else if (name == "__wrapped__" || name == "__func__") add(dst, v);
      // A property's getter: `@name.setter` gives back the function it decorates.
      else if (name == "setter" || name == "getter" || name == "deleter")
        add(dst, value(Kind::external, str("builtins.property." + name)));
      return;
    case Kind::generator:
      // send/throw resume the body; what they give back is what it yields.
      if (name == "send" || name == "throw" || name == "__next__" || name == "close")
        add(dst, value(Kind::cmethod, v, str(name)));
      return;
    case Kind::bound:
      if (name == "__func__") add(dst, value(Kind::function, x.a));
      if (name == "__self__") add(dst, x.b);
      return;
    case Kind::external:
      add(dst, value(Kind::external, str(dotted(strings[x.a], name))));
      return;
    case Kind::ext_instance: {
      std::string cls = strings[x.a];
      std::string attr_class = audit::detail::external_attribute(cls, name);
      if (!attr_class.empty()) add(dst, value(Kind::ext_instance, str(attr_class)));  // a Path's parent
      else add(dst, value(Kind::external, str(dotted(cls, name))));
      return;
    }
    case Kind::constant:
      // "linux".startswith("java"): answered where both are literals (a platform test).
      if (strings[x.a].rfind("str:", 0) == 0 && (name == "startswith" || name == "endswith"))
        add(dst, value(Kind::cmethod, v, str(name)));
      else if (strings[x.a].rfind("str", 0) == 0) add(dst, value(Kind::external, str("builtins.str." + name)));
      return;
    default:
      add(dst, value(Kind::unknown));
  }
}

uint32_t Solver::Impl::any_slot(uint32_t container) { return slot(container, "*"); }

uint32_t Solver::Impl::slot(uint32_t container, const std::string& key) {
  auto k = std::make_pair(container, str(key));
  auto it = container_slots.find(k);
  if (it != container_slots.end()) return it->second;
  uint32_t v = new_var();
  container_slots[k] = v;
  slots_of[container].push_back({k.second, v});
  // Every slot feeds the container's "all items" variable.
  auto all = container_all.find(container);
  if (all != container_all.end()) copy_edge(v, all->second);
  return v;
}

uint32_t Solver::Impl::all_items(uint32_t container) {
  auto it = container_all.find(container);
  if (it != container_all.end()) return it->second;
  uint32_t all = new_var();
  container_all[container] = all;
  for (auto [k, v] : std::vector<std::pair<uint32_t, uint32_t>>(slots_of[container])) copy_edge(v, all);
  return all;
}

uint32_t Solver::Impl::make_container(Container::Kind kind) {
  uint32_t id = uint32_t(containers.size());
  containers.push_back({UINT32_MAX, synthetic_containers++});
  container_kinds.push_back(kind);
  return id;
}

// What iterating `v` gives, into dst: a container's items (a dict's keys), a generator's
// yields, an instance's __iter__ then __next__.
void Solver::Impl::items_of(uint32_t v, uint32_t dst, uint32_t instr, int line) {
  const Value x = values[v];
  switch (x.kind) {
    case Kind::container:
      if (container_kinds[x.a] == Container::dict) {
        for (auto [k, slotvar] : std::vector<std::pair<uint32_t, uint32_t>>(slots_of[x.a]))
          if (strings[k] != "*") add(dst, value(Kind::constant, k));
        add(dst, value(Kind::constant, str("str")));
      } else {
        copy_edge(all_items(x.a), dst);
      }
      return;
    case Kind::view: {
      if (x.b == 1) {
        copy_edge(all_items(x.a), dst);
      } else if (x.b == 0) {
        items_of(value(Kind::container, x.a), dst, instr, line);
      } else {
        auto it = synthetic_items.find(x.a);
        uint32_t pair;
        if (it == synthetic_items.end()) {
          pair = make_container(Container::tuple);
          synthetic_items[x.a] = pair;
          items_of(value(Kind::container, x.a), slot(pair, "int:0"), instr, line);
          copy_edge(all_items(x.a), slot(pair, "int:1"));
        } else {
          pair = it->second;
        }
        add(dst, value(Kind::container, pair));
      }
      return;
    }
    case Kind::generator: {
      reach(x.a);  // its body runs as it is iterated
      copy_edge(svar(x.a, scope(x.a).yields), dst);
      return;
    }
    case Kind::instance: {
      uint32_t it = temp(instr, 8, v);
      call_method(v, "__iter__", {}, it, instr, line);
      watch(it, instr);
      for (uint32_t r : vals(it, instr)) {
        const Value& y = values[r];
        if (y.kind == Kind::instance) call_method(r, "__next__", {}, dst, instr, line);
        else if (y.kind != Kind::unknown) items_of(r, dst, instr, line);
      }
      if (!find_in_mro(x.a, "__iter__", instr) && find_in_mro(x.a, "__getitem__", instr)) {
        CallArgs args;
        call_method(v, "__getitem__", args, dst, instr, line);
      }
      return;
    }
    case Kind::ext_instance:
    case Kind::external:
    case Kind::unknown:
      add(dst, value(Kind::unknown));
      return;
    case Kind::constant:
      if (strings[x.a].rfind("str", 0) == 0) add(dst, value(Kind::constant, str("str")));
      return;
    default:
      return;
  }
}

}  // namespace sitepatch::audit::flow
