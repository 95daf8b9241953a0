// The solver's core: interned values, variables and copy edges, the worklist of
// instructions, modules lowered on demand, scopes reached, and the guards that keep an
// arm's instructions waiting until a value that can enter it arrives.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

uint32_t Solver::Impl::str(const std::string& s) {
  auto [it, fresh] = string_ids.emplace(s, uint32_t(strings.size()));
  if (fresh) strings.push_back(s);
  return it->second;
}

uint32_t Solver::Impl::value(Kind k, uint32_t a, uint32_t b) {
  Value v{k, a, b};
  auto [it, fresh] = value_ids.emplace(v, uint32_t(values.size()));
  if (fresh) values.push_back(v);
  return it->second;
}

uint32_t Solver::Impl::new_var() {
  vars.emplace_back();
  return uint32_t(vars.size() - 1);
}

uint32_t Solver::Impl::temp(uint32_t instr, uint32_t what, uint32_t of) {
  auto [it, fresh] = temps.emplace(std::make_tuple(instr, what, of), 0);
  if (fresh) it->second = new_var();
  return it->second;
}

bool Solver::Impl::add(uint32_t var, uint32_t v) {
  // Gathered, then carried on in batches (flush): a popular variable's readers run once
  // per batch, not once per value.
  auto& x = vars[var];
  // A variable that already holds many names outside the program (a parameter every
  // caller passes something else to) takes further ones as one unknown outside object:
  // each would otherwise make new names at every attribute read, without end.
  if (values[v].kind == Kind::external || values[v].kind == Kind::ext_instance) {
    if (x.externals >= kMaxExternals) v = value(Kind::external, str("?"));
    else ++x.externals;
  }
  if (std::binary_search(x.pts.begin(), x.pts.end(), v)) return false;
  x.pending.push_back(v);
  if (!x.dirty) {
    x.dirty = true;
    dirty.push_back(var);
  }
  return true;
}

void Solver::Impl::flush() {
  std::vector<uint32_t> delta, merged;
  while (!dirty.empty()) {
    uint32_t x = dirty.back();
    dirty.pop_back();
    VarState& st = vars[x];
    st.dirty = false;
    delta.swap(st.pending);
    st.pending.clear();
    std::sort(delta.begin(), delta.end());
    delta.erase(std::unique(delta.begin(), delta.end()), delta.end());
    merged.clear();
    std::set_union(st.pts.begin(), st.pts.end(), delta.begin(), delta.end(), std::back_inserter(merged));
    if (merged.size() == st.pts.size()) continue;
    // Only what is new goes on.
    std::vector<uint32_t> fresh;
    std::set_difference(delta.begin(), delta.end(), st.pts.begin(), st.pts.end(), std::back_inserter(fresh));
    st.pts.swap(merged);
    held += fresh.size();
    if (base_vars.count(x)) ++bases_epoch;
    for (uint32_t w : vars[x].watchers) enqueue(w);
    for (uint32_t s : vars[x].succ)
      for (uint32_t v : fresh) add(s, v);
  }
}

void Solver::Impl::add_all(uint32_t var, const std::vector<uint32_t>& vals) {
  for (uint32_t v : std::vector<uint32_t>(vals)) add(var, v);
}

uint32_t Solver::Impl::force(uint32_t lazy, uint32_t instr) {
  auto it = lazy_vars.find(lazy);
  if (it != lazy_vars.end()) return it->second;
  uint32_t v = new_var();
  lazy_vars[lazy] = v;
  const Value x = values[lazy];
  load_attr(value(Kind::module, x.a), strings[x.b], v, instr);
  return v;
}

std::vector<uint32_t> Solver::Impl::vals(uint32_t var, uint32_t instr, std::vector<uint32_t>* consulted) {
  watch(var, instr);
  if (consulted) consulted->push_back(var);
  const auto& p = pts(var);
  if (std::none_of(p.begin(), p.end(), [&](uint32_t v) { return values[v].kind == Kind::lazy; })) return p;
  std::vector<uint32_t> out, todo(p.begin(), p.end());
  std::unordered_set<uint32_t> seen;
  while (!todo.empty()) {
    uint32_t v = todo.back();
    todo.pop_back();
    if (!seen.insert(v).second) continue;
    if (values[v].kind != Kind::lazy) {
      out.push_back(v);
      continue;
    }
    uint32_t lv = force(v, instr);
    watch(lv, instr);
    if (consulted) consulted->push_back(lv);
    for (uint32_t w : pts(lv)) todo.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Solver::Impl::copy_edge(uint32_t from, uint32_t to) {
  if (from == to || !copy_edges.insert((uint64_t(from) << 32) | to).second) return;
  vars[from].succ.push_back(to);
  add_all(to, vars[from].pts);
}

void Solver::Impl::watch(uint32_t var, uint32_t instr) {
  if (instr == kNoInstr) return;
  if (watching.insert((uint64_t(var) << 32) | instr).second) vars[var].watchers.push_back(instr);
}

void Solver::Impl::enqueue(uint32_t instr) {
  // An inactive one is queued too: evaluate() checks its guard again.
  if (queued[instr]) return;
  queued[instr] = 1;
  work.push_back(instr);
}

const Instr& Solver::Impl::instr_of(uint32_t id) const {
  const Site& s = instrs[id];
  return modules[s.module].ir.scopes[s.scope_local].code[s.index];
}

int Solver::Impl::load(const std::string& name) {
  auto it = module_index.find(name);
  if (it != module_index.end()) return it->second;
  // Importing a.b.c imports a and a.b first (their code is read; it runs when reached).
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
    if (load(name.substr(0, dot)) < 0) break;
  auto lowered = source.load(name);
  if (!lowered) {
    if (source.compiled(name)) compiled_modules.insert(name);
    module_index[name] = -1;
    return -1;
  }
  Loaded l;
  l.ir = std::move(*lowered);
  l.var_base = uint32_t(vars.size());
  vars.resize(vars.size() + l.ir.vars);
  l.scope_base = uint32_t(scopes.size());
  l.class_base = uint32_t(classes.size());
  l.call_base = uint32_t(calls.size());
  l.container_base = uint32_t(containers.size());
  uint32_t m = uint32_t(modules.size());
  for (uint32_t k = 0; k < l.ir.scopes.size(); ++k) scopes.push_back({m, k});
  for (uint32_t k = 0; k < l.ir.classes.size(); ++k) classes.push_back({m, k});
  for (uint32_t k = 0; k < l.ir.calls.size(); ++k) calls.push_back({m, k});
  for (uint32_t k = 0; k < l.ir.containers.size(); ++k) {
    containers.push_back({m, k});
    container_kinds.push_back(l.ir.containers[k].kind);
  }
  reached.resize(scopes.size(), 0);
  // A top-level script's modules beside it (same folder) are its program; a package
  // module's import-time code is its own only.
  if (name == entry_module) l.program = true;
  else if (entry_module.find('.') == std::string::npos && !modules.empty() && modules[0].ir.name == entry_module &&
           l.ir.root == modules[0].ir.root && !l.ir.root.empty())
    l.program = true;
  modules.push_back(std::move(l));
  module_index[name] = int(m);
  // What the module binds at its top level, as attributes of the module value.
  uint32_t mv = value(Kind::module, str(name));
  for (auto& [g, v] : modules[m].ir.globals) module_attrs[{mv, str(g)}] = gvar(m, v);
  for (uint32_t k = 0; k < modules[m].ir.classes.size(); ++k) {
    for (auto& [a, v] : modules[m].ir.classes[k].attrs)
      class_attrs[{modules[m].class_base + k, str(a)}] = gvar(m, v);
    for (Var b : modules[m].ir.classes[k].bases) base_vars.insert(gvar(m, b));
  }
  return int(m);
}

void Solver::Impl::reach_top(uint32_t m) {
  if (modules[m].top_reached) return;
  modules[m].top_reached = true;
  reach(modules[m].scope_base);
}

void Solver::Impl::reach(uint32_t scope) {
  if (reached[scope]) return;
  reached[scope] = 1;
  const uint32_t m = scopes[scope].module, local = scopes[scope].local;
  const Scope& s = modules[m].ir.scopes[local];
  for (uint32_t k = 0; k < s.code.size(); ++k) {
    instrs.push_back({m, local, k, scope});
    active.push_back(0);
    queued.push_back(0);
    uint32_t id = uint32_t(instrs.size() - 1);
    if (s.code[k].guard == 0) active[id] = 1;
    enqueue(id);
  }
}

namespace {

// Two tests of one variable that cannot both pass (`if x:` around `if not x:`, `is None`
// around `is not None`, == "a" around == "b"): the arm is closed whatever x holds.
bool exclusive(const Guard& x, const Guard& y) {
  if (x.var != y.var || x.test == Guard::either || y.test == Guard::either) return false;
  auto opposite = [](Guard::Test p, Guard::Test q) {
    return (p == Guard::truthy && q == Guard::falsy) || (p == Guard::is_none && q == Guard::not_none);
  };
  if (opposite(x.test, y.test) || opposite(y.test, x.test)) return true;
  if (x.test == Guard::equals && y.test == Guard::equals && x.literal != y.literal) return true;
  return ((x.test == Guard::equals && y.test == Guard::not_equals) ||
          (x.test == Guard::not_equals && y.test == Guard::equals)) &&
         x.literal == y.literal;
}

}  // namespace

// Whether some value the guard's variables hold now can pass every test up its chain.
// Not yet: the instruction waits on those variables (and runs once one can).
bool Solver::Impl::guard_may_pass(uint32_t scope, uint32_t g, uint32_t instr, bool empty_passes) {
  std::vector<const Guard*> below;
  return chain_may_pass(scope, g, below, instr, empty_passes);
}

// `below`: the tests already passed further down the chain, each checked against those
// above it. An `either` (`a or b`) passes when one alternative does, with what is below.
bool Solver::Impl::chain_may_pass(uint32_t scope, uint32_t g, std::vector<const Guard*>& below, uint32_t instr,
                                  bool empty_passes) {
  const Module& ir = modules[scopes[scope].module].ir;
  size_t mark = below.size();
  bool may = true;
  for (; g != 0 && may; g = ir.guards[g].parent) {
    const Guard& gd = ir.guards[g];
    if (gd.test == Guard::either) {
      may = chain_may_pass(scope, gd.alt[0], below, instr, empty_passes) ||
            chain_may_pass(scope, gd.alt[1], below, instr, empty_passes);
      break;
    }
    for (const Guard* x : below)
      if (exclusive(*x, gd)) may = false;
    if (may) may = test_may_pass(gd, vals(svar(scope, gd.var), instr), empty_passes);
    below.push_back(&gd);
  }
  below.resize(mark);
  return may;
}

bool Solver::Impl::test_may_pass(const Guard& gd, const std::vector<uint32_t>& held, bool empty_passes) const {
  bool may = empty_passes && held.empty();
  for (uint32_t val : held) {
    const Value& x = values[val];
    if (x.kind == Kind::constant) {
      const std::string& c = strings[x.a];
      bool falsy = c == "None" || c == "False" || c == "int:0" || c == "str:";
      bool truthy = c == "True" || (c.rfind("int:", 0) == 0 && c != "int:0") || (c.rfind("str:", 0) == 0 && c != "str:");
      switch (gd.test) {
        case Guard::truthy: may = !falsy; break;
        case Guard::falsy: may = !truthy; break;
        case Guard::is_none: may = c == "None" || c == "unknown"; break;
        case Guard::not_none: may = c != "None"; break;
        case Guard::equals: may = c == gd.literal || c.find(':') == std::string::npos; break;
        case Guard::not_equals: may = c != gd.literal; break;
        case Guard::one_of:
          may = c.find(':') == std::string::npos || std::find(gd.among.begin(), gd.among.end(), c) != gd.among.end();
          break;
        case Guard::none_of: may = std::find(gd.among.begin(), gd.among.end(), c) == gd.among.end(); break;
        case Guard::either: may = true; break;
      }
    } else if (x.kind == Kind::function || x.kind == Kind::klass || x.kind == Kind::module || x.kind == Kind::bound) {
      may = gd.test == Guard::truthy || gd.test == Guard::not_none || gd.test == Guard::not_equals ||
            gd.test == Guard::none_of;
    } else if (x.kind == Kind::instance || x.kind == Kind::generator || x.kind == Kind::partial) {
      may = gd.test != Guard::is_none;
    } else {
      may = true;  // containers (maybe empty), externals and unknowns: anything
    }
    if (may) break;
  }
  return may;
}

void Solver::Impl::edge(uint32_t from, uint32_t to, int line) {
  from = origin(from);
  to = origin(to);
  uint64_t key = (uint64_t(from) << 32) | to;
  if (edge_seen.insert(key).second) edges.push_back({from, to, line});
}

void Solver::Impl::external(uint32_t scope, const Instr& in, const std::string& name, const std::string& text) {
  scope = origin(scope);
  if (external_seen.insert({scope, in.line, in.column, name}).second)
    externals.push_back({scope, in.line, in.column, name, text});
}

void Solver::Impl::not_followed(uint32_t scope, const Instr& in, const std::string& text, const std::string& why) {
  scope = origin(scope);
  if (unfollowed_seen.insert({scope, in.line, text}).second) unfollowed.push_back({scope, in.line, text, why});
}

Solver::Solver(Source& source) : impl_(std::make_unique<Impl>(source)) {}
Solver::~Solver() = default;

bool Solver::enter_module(const std::string& name) {
  impl_->entry_module = name;
  int m = impl_->load(name);
  if (m < 0) return false;
  impl_->reach_top(uint32_t(m));
  return true;
}

namespace {
bool annotated(const Scope& s, Var param) {
  for (const Instr& in : s.code)
    if (in.op == Op::copy && in.name == "annotation" && in.dst == param) return true;
  return false;
}
}  // namespace

// Of the functions a module defines by one name (a def in each arm of an `if`), the one
// its top level binds the name to: the module's top level is solved first to see it.
uint32_t Solver::pick_definition(uint32_t m, const std::string& qualified) {
  auto& I = *impl_;
  std::vector<uint32_t> found;
  const Module& ir = I.modules[m].ir;
  for (uint32_t k = 0; k < ir.scopes.size(); ++k)
    if (ir.scopes[k].qualified == qualified && ir.scopes[k].kind != Scope::module) found.push_back(k);
  if (found.size() < 2) return found.empty() ? UINT32_MAX : found[0];
  auto g = ir.globals.find(qualified);
  if (g == ir.globals.end()) return found[0];
  I.reach_top(m);
  solve_once();
  for (uint32_t k : found)
    for (uint32_t v : I.pts(I.gvar(m, g->second)))
      if (I.values[v].kind == Kind::function && I.values[v].a == I.modules[m].scope_base + k) return k;
  return found[0];
}

bool Solver::enter_function(const std::string& name, const std::string& qualified, int line) {
  impl_->entry_module = name;
  int m = impl_->load(name);
  if (m < 0) return false;
  auto& L = impl_->modules[size_t(m)];
  uint32_t chosen = UINT32_MAX;
  // A line a traceback names picks the definition that ran, whichever the top level binds.
  for (uint32_t k = 0; line > 0 && k < L.ir.scopes.size(); ++k)
    if (L.ir.scopes[k].qualified == qualified && L.ir.scopes[k].kind != Scope::module &&
        L.ir.scopes[k].line <= line && line <= L.ir.scopes[k].end_line)
      chosen = k;
  if (chosen == UINT32_MAX) chosen = pick_definition(uint32_t(m), qualified);
  for (uint32_t k = 0; k < L.ir.scopes.size(); ++k) {
    if (k != chosen) continue;
    // Its module is imported (its names bound); its parameters hold what no caller says.
    impl_->reach_top(uint32_t(m));
    uint32_t unknown = impl_->value(Kind::unknown);
    const Scope& s = L.ir.scopes[k];
    for (size_t p = 0; p < s.params.size(); ++p) {
      uint32_t v = impl_->gvar(uint32_t(m), s.params[p].var);
      if (p == 0 && s.cls >= 0 && !s.is_staticmethod) {
        uint32_t cls = L.class_base + uint32_t(s.cls);
        impl_->add(v, impl_->value(s.is_classmethod ? Kind::klass : Kind::instance, cls));
      } else if (s.params[p].default_value != kNoVar) {
        // A parameter with a default holds it, as when the entry is called with the other
        // arguments only: an arm only another value opens is listed as ruled out, with
        // the default that closes it (issue 50: a chain "cannot happen" with the entry's
        // defaults).
        impl_->copy_edge(impl_->gvar(uint32_t(m), s.params[p].default_value), v);
      } else if (!annotated(s, s.params[p].var)) {
        impl_->add(v, unknown);  // an annotated one holds what its annotation says
      }
    }
    impl_->entry_scope = L.scope_base + k;
    impl_->reach(L.scope_base + k);
    // The receiver of a method entry was made before the entry runs: its __init__ ran
    // (with arguments nobody here knows), and what it set on the instance is there.
    if (s.cls >= 0 && !s.is_staticmethod && !s.is_classmethod) impl_->made_before.push_back(L.class_base + uint32_t(s.cls));
    return true;
  }
  return false;
}

void Solver::solve() {
  auto& I = *impl_;
  solve_once();
  if (I.cut) return I.dump_growth();
  // A test of a variable nothing ever gave a value (a result this analysis does not model)
  // says nothing: the code it guards may run.
  for (bool more = true; more;) {
    more = false;
    for (uint32_t id = 0; id < I.instrs.size(); ++id) {
      if (I.active[id]) continue;
      // ... unless another test up its chain is decided against it.
      const Module& ir = I.modules[I.instrs[id].module].ir;
      bool untested = false;
      for (uint32_t g = I.instr_of(id).guard; g != 0 && !untested; g = ir.guards[g].parent)
        untested = ir.guards[g].test != Guard::either && I.pts(I.ivar(id, ir.guards[g].var)).empty();
      if (untested && I.guard_may_pass(I.instrs[id].scope, I.instr_of(id).guard, kNoInstr, true)) {
        I.active[id] = 1;
        I.enqueue(id);
        more = true;
      }
    }
    if (more) solve_once();
    if (I.cut) return I.dump_growth();
  }
  // Receivers made before the entry: their constructors, once the classes' bases are known.
  for (size_t k = 0; k < I.made_before.size(); ++k) {
    uint32_t cls = I.made_before[k];
    uint32_t inst = I.value(Kind::instance, cls);
    auto found = I.find_in_mro(cls, "__init__", kNoInstr);
    if (!found) continue;
    for (uint32_t f : std::vector<uint32_t>(I.pts(found->second))) {
      if (I.values[f].kind != Kind::function) continue;
      uint32_t fs = I.values[f].a;
      const uint32_t m = I.scopes[fs].module, local = I.scopes[fs].local;
      const Scope& init = I.modules[m].ir.scopes[local];
      for (size_t p = 0; p < init.params.size(); ++p)
        I.add(I.svar(fs, init.params[p].var), p == 0 ? inst : I.value(Kind::unknown));
      I.reach(fs);
    }
  }
  solve_once();
  // Abstract calls no made subclass answers: the subclasses across the package, a few
  // generations down.
  for (int generation = 0; generation < 3 && !I.cut; ++generation) {
    bool more = I.far_read();
    if (more) solve_once();
    if (I.cut) break;
    if (I.far_send()) solve_once();
    if (!more) break;
  }
  if (!I.cut) {
    I.note_empty_calls();
    I.note_ruled_out();
  }
  I.dump_growth();
}

void Solver::solve_once() {
  auto& I = *impl_;
  while (true) {
    I.flush();
    if (I.work.empty()) break;
    uint32_t id = I.work.front();
    I.work.pop_front();
    I.queued[id] = 0;
    if (!I.active[id]) {
      if (!I.guard_may_pass(I.instrs[id].scope, I.instr_of(id).guard, id)) continue;
      I.active[id] = 1;
    }
    ++I.evaluations;
    // A bound on what one audit may hold: past it the answer is cut, and says so.
    if (I.held > kMaxHeld || I.values.size() > kMaxValues) {
      I.cut = true;
      I.work.clear();
      break;
    }
    I.evaluate(id);
  }
}

const std::vector<FlowEdge>& Solver::edges() const { return impl_->edges; }
const std::vector<ExternalCall>& Solver::external_calls() const { return impl_->externals; }
const std::vector<Unfollowed>& Solver::unfollowed() const { return impl_->unfollowed; }
const std::vector<RuledOutCall>& Solver::ruled_out() const { return impl_->ruled_out_calls; }
std::vector<uint32_t> Solver::reached_scopes() const {
  std::vector<uint32_t> out;
  for (uint32_t k = 0; k < impl_->reached.size(); ++k)
    if (impl_->reached[k]) out.push_back(impl_->origin(k));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}
const Module& Solver::module_of(uint32_t scope) const { return impl_->modules[impl_->scopes[scope].module].ir; }
const Scope& Solver::scope(uint32_t scope) const {
  const uint32_t m = impl_->scopes[scope].module, local = impl_->scopes[scope].local;
  return impl_->modules[m].ir.scopes[local];
}
size_t Solver::modules_loaded() const { return impl_->modules.size(); }
bool Solver::cut() const { return impl_->cut; }
std::string Solver::via(uint32_t from, uint32_t to) {
  auto& I = *impl_;
  const Scope& a = scope(from);
  const Scope& b = scope(to);
  if (b.cls < 0) return "";
  uint32_t pb = I.modules[I.scopes[to].module].class_base + uint32_t(b.cls);
  // A subclass found across the package is said from any caller (far(spec: Base) calls
  // spec.build()); one some code makes, where self's call went past the caller's class.
  if (!I.far_made.count(pb)) {
    if (a.cls < 0) return "";
    uint32_t pa = I.modules[I.scopes[from].module].class_base + uint32_t(a.cls);
    if (pa == pb) return "";
    auto order = I.mro(pb, kNoInstr);
    if (std::find(order.begin(), order.end(), pa) == order.end()) return "";
  }
  auto [m, local] = I.classes[pb];
  return "via subclass " + I.modules[m].ir.name + "." + I.modules[m].ir.classes[local].qualified +
         (I.far_made.count(pb) ? " (none of them is made in the walked code)" : "");
}

bool Solver::inherited_guess(const std::string& dotted) const {
  auto it = impl_->string_ids.find(dotted);
  return it != impl_->string_ids.end() && impl_->inherited_guesses.count(it->second);
}

bool Solver::star_made(const std::string& dotted) const {
  auto it = impl_->string_ids.find(dotted);
  return it != impl_->string_ids.end() && impl_->star_made.count(it->second);
}
bool Solver::is_program(uint32_t scope) const { return impl_->modules[impl_->scopes[scope].module].program; }

}  // namespace sitepatch::audit::flow
