// What the solver says of the calls it could not follow, once the fixpoint is reached:
// why a callee holds nothing known, a name that only imports bind in a circle, and the
// calls of arms that the literal arguments of every caller rule out.
#include <algorithm>

#include "audit/flow/solver_impl.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::flow {

// Why a callee holds nothing known (`empty`: no value at all), from the instruction that
// gives it its value: a parameter, a call's result, an item, an attribute.
std::string Solver::Impl::why_unknown(uint32_t scope_id, Var var, bool empty) const {
  const Module& ir = modules[scopes[scope_id].module].ir;
  const Scope& sc = scope(scope_id);
  auto made_by = [&](Var v) -> const Instr* {
    for (const Instr& in : sc.code)
      if (in.dst == v && in.op != Op::copy) return &in;
    return nullptr;
  };
  auto returned = [&](const Instr* in) {
    const Call& c = ir.calls[size_t(in->index)];
    if (c.text == "getattr") {
      // getattr(x, "name"): the attribute; getattr(x, name): a name only the run knows.
      const Instr* key = c.args.size() > 1 ? made_by(c.args[1].var) : nullptr;
      if (key && key->op == Op::constant && key->name.rfind("str:", 0) == 0)
        return "attribute `" + key->name.substr(4) + "`" +
               (empty ? ": nothing this analysis follows assigns it" : ", whose value is not known");
      return std::string("getattr with a name known only at run time");
    }
    return "what " + c.text + "() returns is not known";
  };
  for (const Param& p : sc.params)
    if (p.var == var) return "parameter `" + p.name + "`: what its callers pass is not known";
  const Instr* in = made_by(var);
  if (in && in->op == Op::call) return returned(in);
  if (in && in->op == Op::load_item) return "an item whose value is not known";
  if (in && in->op == Op::load_attr) {
    // self.cache.missing.build(): name the first attribute that holds nothing, not the last.
    for (const Instr* inner = made_by(in->a); empty && inner && inner->op == Op::load_attr &&
                                              pts(svar(scope_id, in->a)).empty();
         inner = made_by(in->a))
      in = inner;
    const Instr* base = made_by(in->a);
    if (base && base->op == Op::call) return returned(base);
    for (const Param& p : sc.params)
      if (p.var == in->a) return "attribute `" + in->name + "` of parameter `" + p.name + "`, whose value is not known";
    return empty ? "attribute `" + in->name + "`: nothing this analysis follows assigns it"
                 : "attribute `" + in->name + "`, whose value is not known";
  }
  return empty ? "no value this analysis knows reaches it" : "a value this analysis does not know";
}

// A call that runs but that no value reaches (an attribute nothing assigns, the result of a
// call not followed) is not followed either: said, never silently dropped.
void Solver::Impl::note_empty_calls() {
  // A call of a cloned function is followed where any copy of it reaches a value.
  std::unordered_set<uint64_t> reached_somewhere;
  for (uint32_t id = 0; id < instrs.size(); ++id) {
    const Instr& in = instr_of(id);
    if (active[id] && in.op == Op::call && scopes[instrs[id].scope].ctx != 0)
      if (!pts(ivar(id, modules[instrs[id].module].ir.calls[size_t(in.index)].callee)).empty())
        reached_somewhere.insert((uint64_t(origin(instrs[id].scope)) << 32) | instrs[id].index);
  }
  for (uint32_t id = 0; id < instrs.size(); ++id) {
    if (!active[id]) continue;
    const Instr& in = instr_of(id);
    if (in.op != Op::call) continue;
    const Site& site = instrs[id];
    if (scopes[site.scope].local == 0 && !modules[site.module].program) continue;  // import-time bindings
    const Call& c = modules[site.module].ir.calls[size_t(in.index)];
    uint32_t callee = ivar(id, c.callee);
    if (pts(callee).empty() && reached_somewhere.count((uint64_t(origin(site.scope)) << 32) | site.index)) continue;
    if (auto a = abstract_unfollowed.find(callee); a != abstract_unfollowed.end()) {
      not_followed(site.scope, in, c.text, a->second);
      continue;
    }
    if (auto circle = import_circle(callee)) {
      if (unfollowed_seen.insert({origin(site.scope), in.line, c.text}).second)
        unfollowed.push_back({origin(site.scope), in.line, c.text, "resolves in a circle: " + *circle, true});
      continue;
    }
    if (!pts(callee).empty()) continue;
    auto made = getattr_made.find(callee);
    not_followed(site.scope, in, c.text,
                 made != getattr_made.end() ? made->second : why_unknown(site.scope, c.callee, true));
  }
  for (auto& [at, text] : uncalled_any) {
    const Value& x = values[at.second];
    not_followed(caller_scope(at.first), instr_of(at.first), text,
                 "an attribute of " + strings[x.a] + " named only at run time: it binds no function or class");
  }
  for (auto& [at, text] : called_any) {
    if (uncalled_any.count(at)) continue;
    const Value& x = values[at.second];
    not_followed(caller_scope(at.first), instr_of(at.first), text,
                 "an attribute of " + strings[x.a] + " named only at run time: each function and class it binds "
                 "is followed, but which one runs is the run's choice");
  }
}

// `from .b import f` in a, `from .a import f` in b: a name only imports bind, each from the
// other, holds nothing (Python's import raises). The names around the circle, or nullopt.
std::optional<std::string> Solver::Impl::import_circle(uint32_t var) const {
  std::vector<uint32_t> path;  // the lazy values read, in order
  uint32_t at = var;
  while (true) {
    const auto& p = pts(at);
    if (p.size() != 1 || values[p[0]].kind != Kind::lazy) return std::nullopt;
    uint32_t lazy = p[0];
    auto seen = std::find(path.begin(), path.end(), lazy);
    if (seen != path.end()) {
      std::vector<std::string> names;
      for (auto it = seen + 1; it != path.end(); ++it) names.push_back(strings[values[*it].a] + "." + strings[values[*it].b]);
      names.push_back(strings[values[*seen].a] + "." + strings[values[*seen].b]);
      return util::join(names, " -> ");
    }
    path.push_back(lazy);
    auto forced = lazy_vars.find(lazy);
    if (forced == lazy_vars.end()) return std::nullopt;
    at = forced->second;
  }
}

namespace {

// A constant as the caller wrote it: False, None, 3, 'cpu'.
std::string spelled(const std::string& c) {
  if (c.rfind("str:", 0) == 0) return "'" + c.substr(4) + "'";
  if (c.rfind("int:", 0) == 0) return c.substr(4);
  return c;
}

std::string test_text(const Guard& gd, const std::string& name) {
  switch (gd.test) {
    case Guard::truthy: return name;
    case Guard::falsy: return "not " + name;
    case Guard::is_none: return name + " is None";
    case Guard::not_none: return name + " is not None";
    case Guard::equals: return name + " == " + spelled(gd.literal);
    case Guard::not_equals: return name + " != " + spelled(gd.literal);
    case Guard::either: return name;
    case Guard::one_of:
    case Guard::none_of: {
      std::string items;
      for (auto& l : gd.among) items += (items.empty() ? "" : ", ") + spelled(l);
      return name + (gd.test == Guard::one_of ? " in (" : " not in (") + items + ")";
    }
  }
  return name;
}

}  // namespace

// Why the arm of `guard` never runs when a test up its chain is of a parameter every call
// gives one literal value that fails it; nullopt when no such test decides it.
std::optional<std::string> Solver::Impl::ruled_by_arguments(const Site& site, uint32_t guard) const {
  const Module& ir = modules[site.module].ir;
  const Scope& sc = ir.scopes[site.scope_local];
  for (uint32_t g = guard; g != 0; g = ir.guards[g].parent) {
    const Guard& gd = ir.guards[g];
    auto param = std::find_if(sc.params.begin(), sc.params.end(), [&](const Param& p) { return p.var == gd.var; });
    if (param == sc.params.end()) continue;
    const auto& held = pts(svar(site.scope, gd.var));
    if (held.empty() || test_may_pass(gd, held, false)) continue;
    std::vector<std::string> passed;
    for (uint32_t v : held) {
      if (values[v].kind != Kind::constant) return std::nullopt;
      passed.push_back(param->name + "=" + spelled(strings[values[v].a]));
    }
    if (site.scope == entry_scope && passed.size() == 1)
      return "runs only if " + test_text(gd, param->name) + "; the entry's default is " + passed[0];
    return "runs only if " + test_text(gd, param->name) + "; every call passes " + util::join(passed, " or ");
  }
  return std::nullopt;
}

// What the callee of a call never made would be, read without running the arm: a builtin,
// a name of the module, an attribute of a module.
std::vector<uint32_t> Solver::Impl::callee_values(uint32_t scope_id, Var var, int depth) {
  if (depth > 8) return {};
  const Scope& sc = scope(scope_id);
  const Instr* made = nullptr;
  for (const Instr& in : sc.code)
    if (in.dst == var) made = &in;
  // A name `from x import y` bound is read now, the fixpoint done: what that adds is
  // moved at once (flush), not left for a worklist that has stopped.
  auto now = [&](uint32_t g) {
    vals(g, kNoInstr);
    flush();
    return vals(g, kNoInstr);
  };
  std::vector<uint32_t> out;
  if (!made) {
    for (uint32_t v : now(svar(scope_id, var))) out.push_back(v);
  } else if (made->op == Op::copy) {
    return callee_values(scope_id, made->a, depth + 1);
  } else if (made->op == Op::import_from && made->name == "builtins") {
    out.push_back(value(Kind::external, str("builtins." + made->name2)));
  } else if (made->op == Op::load_attr) {
    for (uint32_t b : callee_values(scope_id, made->a, depth + 1)) {
      const Value x = values[b];
      if (x.kind == Kind::external) {
        out.push_back(value(Kind::external, str(strings[x.a] + "." + made->name)));
      } else if (x.kind == Kind::module) {
        int sm = load(strings[x.a]);
        if (sm < 0) {
          out.push_back(value(Kind::external, str(strings[x.a] + "." + made->name)));
        } else if (auto it = modules[size_t(sm)].ir.globals.find(made->name); it != modules[size_t(sm)].ir.globals.end()) {
          for (uint32_t v : now(gvar(uint32_t(sm), it->second))) out.push_back(v);
        }
      }
    }
  }
  return out;
}

// The calls of reached functions that wait on a guard the callers' literal arguments close.
void Solver::Impl::note_ruled_out() {
  size_t reached_instrs = instrs.size();
  // A call of a cloned function that some copy makes is not ruled out (only the cloned
  // functions' instructions are gathered: all of torch's would be tens of MB).
  std::unordered_set<uint32_t> cloned;
  for (size_t k = 1; k < clone_ctxs.size(); ++k)
    for (uint32_t sc : clone_ctxs[k].ids) cloned.insert(origin(sc));
  auto key_of = [&](uint32_t id) { return (uint64_t(origin(instrs[id].scope)) << 32) | instrs[id].index; };
  std::unordered_set<uint64_t> made_somewhere, said;
  for (uint32_t id = 0; id < reached_instrs && !cloned.empty(); ++id)
    if (active[id] && cloned.count(origin(instrs[id].scope))) made_somewhere.insert(key_of(id));
  for (uint32_t id = 0; id < reached_instrs; ++id) {
    if (active[id]) continue;
    if (cloned.count(origin(instrs[id].scope)) && (made_somewhere.count(key_of(id)) || !said.insert(key_of(id)).second))
      continue;
    const Instr& in = instr_of(id);
    const Site site = instrs[id];
    if (in.op != Op::call || in.guard == 0 || scopes[site.scope].local == 0) continue;
    auto why = ruled_by_arguments(site, in.guard);
    if (!why) continue;
    const Call& c = modules[site.module].ir.calls[size_t(in.index)];
    RuledOutCall r{origin(site.scope), in.line, c.text, {}, {}, *why};
    for (uint32_t v : callee_values(site.scope, c.callee)) {
      const Value& x = values[v];
      if (x.kind == Kind::external) r.externals.push_back(strings[x.a]);
      else if (x.kind == Kind::function || x.kind == Kind::bound) r.functions.push_back(origin(x.a));
    }
    if (!r.externals.empty() || !r.functions.empty()) ruled_out_calls.push_back(std::move(r));
  }
}

}  // namespace sitepatch::audit::flow
