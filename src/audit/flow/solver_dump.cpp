// A measurement aid, off unless SITEPATCH_FLOW_DUMP is set: after the fixpoint (or the cut),
// the variables holding the most values, what they are (a parameter, a return, an
// attribute), and the copy edges that fed them, on stderr. Growth of the value sets is what
// bounds an audit's time and memory; this says where it comes from.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

namespace {

const char* value_kind_name(Kind k) {
  static const char* names[] = {"module",  "function", "class",     "instance", "bound",       "container",
                                "view",    "cmethod",  "constant",  "external", "ext_instance", "super",
                                "partial", "generator", "constructor", "lazy",  "module_any",  "unknown"};
  return names[size_t(k)];
}

}  // namespace

std::string Solver::Impl::describe_var(uint32_t var) const {
  // The module whose variables hold it (var_base order).
  uint32_t m = UINT32_MAX;
  for (uint32_t k = 0; k < modules.size(); ++k)
    if (modules[k].var_base <= var && var < modules[k].var_base + modules[k].ir.vars) m = k;
  if (m == UINT32_MAX) {
    for (auto& [key, v] : instance_attrs)
      if (v == var) {
        auto [cm, cl] = classes[key.first];
        return "instance attr " + modules[cm].ir.name + "." + modules[cm].ir.classes[cl].qualified + "." +
               strings[key.second];
      }
    for (auto& [key, v] : container_slots)
      if (v == var) return "container slot " + std::to_string(key.first) + "[" + strings[key.second] + "]";
    for (auto& [key, v] : temps)
      if (v == var) {
        const Site& s = instrs[std::get<0>(key)];
        return "temp " + std::to_string(std::get<1>(key)) + " at " + modules[s.module].ir.name + ":" +
               std::to_string(instr_of(std::get<0>(key)).line);
      }
    return "synthetic var";
  }
  const Module& ir = modules[m].ir;
  Var local = var - modules[m].var_base;
  for (auto& [g, v] : ir.globals)
    if (v == local) return "global " + ir.name + "." + g;
  for (const Scope& s : ir.scopes) {
    const std::string where = ir.name + ":" + (s.qualified.empty() ? "<top>" : s.qualified);
    if (s.returns == local) return "return of " + where;
    for (const Param& p : s.params)
      if (p.var == local) return "param " + p.name + " of " + where;
    for (const Instr& in : s.code)
      if (in.dst == local)
        return "local of " + where + " line " + std::to_string(in.line) + " op " + std::to_string(int(in.op)) +
               (in.name.empty() ? "" : " " + in.name);
  }
  return "var of " + ir.name;
}

// The shortest chain of calls from the entry to a scope whose module or name holds `to`:
// how the walk got somewhere it seems it should not be.
void Solver::Impl::dump_path(const std::string& to) const {
  std::unordered_map<uint32_t, std::vector<const FlowEdge*>> out;
  for (const FlowEdge& e : edges) out[e.from].push_back(&e);
  std::unordered_map<uint32_t, const FlowEdge*> via;
  std::deque<uint32_t> todo;
  // From the entry, then from each module's top level (reached by an import, no edge).
  uint32_t start = entry_scope != UINT32_MAX ? entry_scope : 0;
  todo.push_back(start);
  via[start] = nullptr;
  for (const Loaded& l : modules)
    if (l.top_reached && via.emplace(l.scope_base, nullptr).second) todo.push_back(l.scope_base);
  auto name_of = [&](uint32_t sc) { return modules[scopes[sc].module].ir.name + ":" + scope(sc).qualified; };
  while (!todo.empty()) {
    uint32_t s = todo.front();
    todo.pop_front();
    if (s != start && !scope(s).qualified.empty() && name_of(s).find(to) != std::string::npos) {
      std::fprintf(stderr, "  path: to %s\n", name_of(s).c_str());
      for (const FlowEdge* e = via[s]; e; e = via[e->from])
        std::fprintf(stderr, "  path: %s line %d -> %s\n", name_of(e->from).c_str(), e->line, name_of(e->to).c_str());
      return;
    }
    for (const FlowEdge* e : out[s])
      if (via.emplace(e->to, e).second) todo.push_back(e->to);
  }
  std::fprintf(stderr, "  path: none to %s\n", to.c_str());
}

std::string Solver::Impl::describe_value(uint32_t v) const {
  const Value& x = values[v];
  auto scope_name = [&](uint32_t sc) { return modules[scopes[sc].module].ir.name + ":" + scope(sc).qualified; };
  auto class_name = [&](uint32_t c) {
    return modules[classes[c].module].ir.name + "." + modules[classes[c].module].ir.classes[classes[c].local].qualified;
  };
  std::string k = value_kind_name(x.kind);
  switch (x.kind) {
    case Kind::function: case Kind::generator: return k + " " + scope_name(x.a);
    case Kind::bound: return k + " " + scope_name(x.a) + " of " + describe_value(x.b);
    case Kind::klass: case Kind::instance: case Kind::constructor: return k + " " + class_name(x.a);
    case Kind::module: case Kind::constant: case Kind::external: case Kind::ext_instance: case Kind::module_any:
      return k + " " + strings[x.a];
    case Kind::cmethod: return k + " " + strings[x.b];
    default: return k + " " + std::to_string(x.a);
  }
}

// The totals: values held, by kind, and the container methods' product of receivers and names.
void Solver::Impl::dump_totals() const {
  std::fprintf(stderr, "flow: %zu values held, %zu distinct, %zu vars, %zu instrs, %llu evaluations%s\n", held,
               values.size(), vars.size(), instrs.size(), (unsigned long long)evaluations, cut ? " (cut)" : "");
  size_t code = 0, succ = 0, watchers = 0;
  for (const Loaded& l : modules)
    for (const Scope& sc : l.ir.scopes) code += sc.code.size();
  for (uint32_t k = 0; k < vars.size(); ++k) {
    succ += vars[k].succ.size();
    watchers += vars[k].watchers.size();
  }
  std::fprintf(stderr, "  %zu modules, %zu instructions lowered, %zu variables used, %zu copy edges, %zu watchers\n",
               modules.size(), code, vars.made(), succ, watchers);
  std::vector<size_t> by_kind(size_t(Kind::unknown) + 1, 0);
  for (uint32_t k = 0; k < vars.size(); ++k)
    for (uint32_t x : vars[k].pts) ++by_kind[size_t(values[x].kind)];
  for (size_t k = 0; k < by_kind.size(); ++k)
    if (by_kind[k]) std::fprintf(stderr, "  kind %-12s %zu\n", value_kind_name(Kind(k)), by_kind[k]);
  std::set<uint32_t> receivers;
  std::map<uint32_t, size_t> per_name;
  size_t cms = 0;
  for (const Value& v : values)
    if (v.kind == Kind::cmethod) ++cms, receivers.insert(v.a), ++per_name[v.b];
  std::fprintf(stderr, "  cmethod values %zu over %zu receivers and %zu names\n", cms, receivers.size(),
               per_name.size());
  if (std::getenv("SITEPATCH_FLOW_DUMP_NAMES"))
    for (auto& [n, c] : per_name) std::fprintf(stderr, "    cmethod name %s: %zu\n", strings[n].c_str(), c);
}

// The `top` variables holding most values (of one kind, SITEPATCH_FLOW_DUMP_KIND=cmethod),
// each with the largest variables copied into it.
void Solver::Impl::dump_largest(size_t top) const {
  const char* only = std::getenv("SITEPATCH_FLOW_DUMP_KIND");
  auto weight = [&](uint32_t var) {
    if (!only) return vars[var].pts.size();
    size_t n = 0;
    for (uint32_t x : vars[var].pts) n += std::string(value_kind_name(values[x].kind)) == only;
    return n;
  };
  std::vector<std::pair<size_t, uint32_t>> ranked;
  for (uint32_t k = 0; k < vars.size(); ++k) ranked.push_back({weight(k), k});
  std::sort(ranked.begin(), ranked.end(), std::greater<>());
  std::vector<std::vector<uint32_t>> preds(vars.size());
  for (uint32_t k = 0; k < vars.size(); ++k)
    for (uint32_t s : vars[k].succ) preds[s].push_back(k);
  for (size_t r = 0; r < top && r < ranked.size(); ++r) {
    uint32_t v = ranked[r].second;
    std::fprintf(stderr, "#%zu (%zu) %zu values, %zu succ, %zu preds: %s\n", r, ranked[r].first, vars[v].pts.size(),
                 vars[v].succ.size(), preds[v].size(), describe_var(v).c_str());
    auto p = preds[v];
    std::sort(p.begin(), p.end(), [&](uint32_t a, uint32_t b) { return vars[a].pts.size() > vars[b].pts.size(); });
    for (size_t k = 0; k < p.size() && k < 6; ++k)
      std::fprintf(stderr, "    <- %zu %s\n", vars[p[k]].pts.size(), describe_var(p[k]).c_str());
  }
}

void Solver::Impl::dump_growth() const {
  const char* env = std::getenv("SITEPATCH_FLOW_DUMP");
  if (!env) return;
  dump_totals();
  if (const char* to = std::getenv("SITEPATCH_FLOW_DUMP_PATH")) dump_path(to);
  if (const char* which = std::getenv("SITEPATCH_FLOW_DUMP_VAR"))
    for (uint32_t k = 0; k < vars.size(); ++k) {
      std::string d = describe_var(k);
      if (d.find(which) == std::string::npos) continue;
      std::fprintf(stderr, "  var %s:\n", d.c_str());
      for (uint32_t x : vars[k].pts) std::fprintf(stderr, "    %s\n", describe_value(x).c_str());
    }
  dump_largest(size_t(std::max(1, std::atoi(env))));
}

}  // namespace sitepatch::audit::flow
