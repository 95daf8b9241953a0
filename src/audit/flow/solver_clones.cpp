// Bounded context sensitivity: a small function that defines nested functions (a decorator
// factory, `def register(name): def deco(fn): REGISTRY[name] = fn`) is solved per call site,
// with its nested scopes, so each call's `name`, and the `deco` it returns with its `fn`,
// are that call's own instead of every call's. A clone is the same lowered code with its
// own copies of the variables only that tree of scopes uses (parameters, locals, the
// summaries its closures read); the module's names stay shared. Edges and reports name
// the original scope. Beyond the bounds (a big function, a class inside, too many call
// sites) a call goes to the shared scope as before.
#include <algorithm>

#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

namespace {

constexpr size_t kMaxCloneCode = 60;       // instructions of the whole tree, at most
constexpr size_t kMaxClonesPerTree = 4;    // call sites solved apart; the rest share
constexpr size_t kMaxClones = 64;          // clones of one audit, at most

// The variables a guard's chain tests, an `either`'s alternatives included.
template <typename Put>
void put_guard_vars(const Module& ir, uint32_t g, const Put& put) {
  for (; g != 0; g = ir.guards[g].parent) {
    const Guard& gd = ir.guards[g];
    if (gd.test != Guard::either) put(gd.var);
    else
      for (uint32_t a : gd.alt) put_guard_vars(ir, a, put);
  }
}

// Every variable the scope's code, parameters and guards use.
void vars_of_scope(const Module& ir, const Scope& s, std::vector<Var>& out) {
  auto put = [&](Var v) {
    if (v != kNoVar) out.push_back(v);
  };
  for (const Param& p : s.params) {
    put(p.var);
    put(p.default_value);
  }
  put(s.returns);
  put(s.yields);
  put(s.sent);
  for (const Instr& in : s.code) {
    put(in.dst);
    put(in.a);
    put(in.b);
    put_guard_vars(ir, in.guard, put);
    if (in.op == Op::call && in.index >= 0) {
      const Call& c = ir.calls[size_t(in.index)];
      put(c.callee);
      for (const Arg& a : c.args) put(a.var);
    } else if (in.op == Op::make_list && in.index >= 0) {
      const Container& c = ir.containers[size_t(in.index)];
      for (Var v : c.items) put(v);
      for (Var v : c.key_vars) put(v);
    }
  }
}

// A tree worth cloning: a function (no generator) with nested functions, no class
// statement inside, small.
bool clonable(const Module& ir, const std::vector<uint32_t>& tree) {
  const Scope& root = ir.scopes[tree[0]];
  if (tree.size() < 2 || root.kind == Scope::module || root.generator || root.coroutine) return false;
  size_t code = 0;
  for (uint32_t k : tree) {
    const Scope& s = ir.scopes[k];
    code += s.code.size();
    if (k != tree[0] && s.cls >= 0) return false;
    for (const Instr& in : s.code)
      if (in.op == Op::klass || in.op == Op::super_ || in.op == Op::star_import) return false;
  }
  return code <= kMaxCloneCode;
}

}  // namespace

uint32_t Solver::Impl::svar(uint32_t scope, Var v) const {
  const ScopeAt& r = scopes[scope];
  if (r.ctx == 0) return gvar(r.module, v);
  const CloneCtx& c = clone_ctxs[r.ctx];
  const auto& p = c.tree->privates;
  auto it = std::lower_bound(p.begin(), p.end(), v);
  if (it == p.end() || *it != v) return gvar(r.module, v);
  return c.base + uint32_t(it - p.begin());
}

uint32_t Solver::Impl::nested_scope(uint32_t scope, uint32_t index) const {
  const ScopeAt& r = scopes[scope];
  if (r.ctx != 0) {
    const CloneCtx& c = clone_ctxs[r.ctx];
    auto& locals = c.tree->locals;
    auto it = std::find(locals.begin(), locals.end(), index);
    if (it != locals.end()) return c.ids[size_t(it - locals.begin())];
  }
  return modules[r.module].scope_base + index;
}

Solver::Impl::CloneTree& Solver::Impl::clone_tree(uint32_t m, uint32_t local) {
  auto [it, fresh] = clone_trees.try_emplace((uint64_t(m) << 32) | local);
  CloneTree& t = it->second;
  if (!fresh) return t;
  const Module& ir = modules[m].ir;
  if (scope_children.size() <= m) scope_children.resize(m + 1);
  auto& children = scope_children[m];
  if (children.empty()) {
    children.resize(ir.scopes.size());
    for (uint32_t k = 1; k < ir.scopes.size(); ++k)
      if (ir.scopes[k].parent >= 0) children[size_t(ir.scopes[k].parent)].push_back(k);
  }
  if (children[local].empty()) return t;
  t.locals.push_back(local);
  for (size_t k = 0; k < t.locals.size() && t.locals.size() <= kMaxCloneCode; ++k)
    for (uint32_t c : children[t.locals[k]]) t.locals.push_back(c);
  if (!clonable(ir, t.locals)) return t;
  std::vector<Var> inside, outside;
  std::vector<uint8_t> in_tree(ir.scopes.size(), 0);
  for (uint32_t k : t.locals) in_tree[k] = 1;
  for (uint32_t k = 0; k < ir.scopes.size(); ++k) vars_of_scope(ir, ir.scopes[k], in_tree[k] ? inside : outside);
  for (auto& [name, v] : ir.globals) outside.push_back(v);
  for (const Class& c : ir.classes) {
    outside.insert(outside.end(), c.bases.begin(), c.bases.end());
    outside.insert(outside.end(), c.factories.begin(), c.factories.end());
    outside.push_back(c.metaclass);
    for (auto& [name, v] : c.attrs) outside.push_back(v);
  }
  std::sort(inside.begin(), inside.end());
  inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
  std::sort(outside.begin(), outside.end());
  std::set_difference(inside.begin(), inside.end(), outside.begin(), outside.end(), std::back_inserter(t.privates));
  t.eligible = !t.privates.empty();
  return t;
}

// The scope a call from `instr` runs: the clone for that call site where the function is
// one to clone and the bounds allow, else the scope itself.
uint32_t Solver::Impl::clone_for(uint32_t scope, uint32_t instr) {
  const ScopeAt r = scopes[scope];
  if (r.ctx != 0 || instr == kNoInstr || clones_made >= kMaxClones) return scope;
  CloneTree& t = clone_tree(r.module, r.local);
  if (!t.eligible) return scope;
  auto found = t.by_site.find(instr);
  if (found != t.by_site.end()) return found->second;
  if (t.by_site.size() >= kMaxClonesPerTree || clones_made >= kMaxClones) return scope;
  ++clones_made;
  CloneCtx c;
  c.tree = &t;
  c.base = uint32_t(vars.size());
  vars.resize(vars.size() + t.privates.size());
  uint32_t ctx = uint32_t(clone_ctxs.size());
  for (uint32_t k : t.locals) {
    c.ids.push_back(uint32_t(scopes.size()));
    scopes.push_back({r.module, k, ctx});
  }
  reached.resize(scopes.size(), 0);
  uint32_t root = c.ids[0];
  clone_ctxs.push_back(std::move(c));
  t.by_site.emplace(instr, root);
  return root;
}

}  // namespace sitepatch::audit::flow
