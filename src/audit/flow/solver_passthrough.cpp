// A function that gives back a parameter as it was given (`return arg` in a decorator like
// typing_extensions.override, `return self` in a builder, a register(cls) that records cls
// and returns it) gives each call what that call passed, not what every call passed. With
// one return variable per function, @override made each method it decorates in torch's
// code the value of every other one: InductorCacheArtifact.type() called dynamo's
// ConstantVariable.call_obj_hasattr, and get_cpp_compiler's walk filled all of
// torch._dynamo.variables until the bound of values held cut it.
//
// So a return is split: what comes from a parameter through plain copies goes from each
// call's argument to that call's result (the call sites are kept, and replayed when a
// return of the parameter is first evaluated); the rest goes through the function's return
// variable as before. Generators and coroutines keep the one variable: their result is read
// where they are iterated or awaited, not at the call. Two looser points, both toward more
// values: the copies between a parameter and the return are followed whatever their guards,
// and what a parameter's annotation adds (where no caller gives it a program value) stays in
// the function, not in the callers' results.
#include <algorithm>

#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

namespace {

// The parameter index of `v` in `s`, or -1. Only a positional or keyword parameter gives
// back what a call passed; *args and **kwargs hold a container made per function.
int plain_param_index(const Scope& s, Var v) {
  for (size_t k = 0; k < s.params.size(); ++k)
    if (s.params[k].var == v && (s.params[k].kind == Param::positional || s.params[k].kind == Param::keyword_only))
      return int(k);
  return -1;
}

}  // namespace

// Where the value a return instruction gives comes from: the parameters it copies, and the
// other variables (leaves) along plain copies in the scope (a join after a branch, a
// conditional expression's arms).
const Solver::Impl::ReturnSources& Solver::Impl::return_sources(uint32_t scope_id, uint32_t index) {
  auto key = (uint64_t(scope_id) << 32) | index;
  auto found = return_source_cache.find(key);
  if (found != return_source_cache.end()) return found->second;
  const uint32_t m = scopes[scope_id].module, local = scopes[scope_id].local;
  const Scope& s = modules[m].ir.scopes[local];
  ReturnSources out;
  std::vector<Var> todo{s.code[index].a}, seen;
  while (!todo.empty()) {
    Var v = todo.back();
    todo.pop_back();
    if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
    seen.push_back(v);
    if (int p = plain_param_index(s, v); p >= 0) {
      out.params.push_back(uint32_t(p));
      continue;
    }
    // A variable fed only by plain copies in this scope is what they copy; any other
    // instruction feeding it makes it a leaf.
    std::vector<Var> from;
    bool plain = true;
    for (const Instr& in : s.code) {
      if (in.dst != v) continue;
      if (in.op == Op::copy && in.name.empty()) from.push_back(in.a);
      else plain = false;
    }
    if (!plain || from.empty() || seen.size() > 64) out.leaves.push_back(v);
    else todo.insert(todo.end(), from.begin(), from.end());
  }
  return return_source_cache.emplace(key, std::move(out)).first->second;
}

void Solver::Impl::eval_return(uint32_t id) {
  const Site& site = instrs[id];
  const Scope& s = modules[site.module].ir.scopes[site.scope_local];
  const Instr& in = instr_of(id);
  uint32_t returns = svar(site.scope, s.returns);
  if (s.generator || s.coroutine) {
    copy_edge(svar(site.scope, in.a), returns);
    return;
  }
  const ReturnSources& from = return_sources(site.scope, site.index);
  for (Var leaf : std::vector<Var>(from.leaves)) copy_edge(svar(site.scope, leaf), returns);
  for (uint32_t p : std::vector<uint32_t>(from.params)) returned_param(site.scope, p);
}

// A return of parameter `p` of `scope` was evaluated: each call's argument is its result.
void Solver::Impl::returned_param(uint32_t scope_id, uint32_t p) {
  auto key = (uint64_t(scope_id) << 32) | p;
  if (!params_returned.insert(key).second) return;
  auto sites = pass_sites.find(key);
  if (sites == pass_sites.end()) return;
  for (const PassSite& site : std::vector<PassSite>(sites->second)) pass_on(site);
}

void Solver::Impl::pass_on(const PassSite& site) {
  if (site.is_value) add(site.dst, site.from);
  else copy_edge(site.from, site.dst);
}

// A call gives parameter `p` of `scope` the values of variable (or the value, `is_value`)
// `from`; its result is `dst`.
void Solver::Impl::bind_param(uint32_t scope_id, uint32_t p, uint32_t param_var, uint32_t from, bool is_value,
                              uint32_t dst) {
  if (is_value) add(param_var, from);
  else copy_edge(from, param_var);
  const Scope& s = scope(scope_id);
  if (s.generator || s.coroutine) return;
  auto key = (uint64_t(scope_id) << 32) | p;
  PassSite site{from, dst, is_value};
  if (!pass_seen.insert(std::make_tuple(key, from, dst, is_value)).second) return;
  pass_sites[key].push_back(site);
  if (params_returned.count(key)) pass_on(site);
}

}  // namespace sitepatch::audit::flow
