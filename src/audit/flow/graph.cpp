// audit's CallGraph from the value-flow solver's fixpoint: every scope reached is walked,
// every call of a function value an edge, every call out of the program a rule flags a
// chain (the shortest path of edges from the entry to the scope making it), every call
// of a value nobody knows a call not followed.
#include <algorithm>
#include <deque>
#include <map>

#include "audit/flow/solver.hpp"
#include "sitepatch/audit/flow.hpp"
#include "sitepatch/util/error.hpp"

namespace sitepatch::audit::flow {

namespace {

class Lowering : public Source {
 public:
  explicit Lowering(ModuleTexts& texts) : texts_(texts) {}
  std::optional<Module> load(const std::string& name) override {
    auto t = texts_.text(name);
    if (!t || !t->compiled.empty()) return std::nullopt;
    Module m;
    if (t->namespace_package) {
      m.name = name;
      m.is_package = true;
      Scope top;
      m.scopes.push_back(top);
    } else {
      m = lower(t->source, name, t->is_package);
    }
    m.file = t->file;
    m.root = t->root;
    return m;
  }

 private:
  ModuleTexts& texts_;
};

std::string node_name(const Solver& s, uint32_t scope) {
  const Module& m = s.module_of(scope);
  const Scope& sc = s.scope(scope);
  return m.name + ":" + (sc.kind == Scope::module ? "<module>" : sc.qualified);
}

Step step_of(const Solver& s, uint32_t scope, int line) {
  const Module& m = s.module_of(scope);
  const Scope& sc = s.scope(scope);
  Step st;
  st.module = m.name;
  st.qualified = sc.kind == Scope::module ? "<module>" : sc.qualified;
  st.file = m.file;
  st.root = m.root;
  st.line = line;
  return st;
}

}  // namespace

CallGraph walk(ModuleTexts& texts, const RuleSet& rules, const WalkOptions& options) {
  Lowering source(texts);
  Solver solver(source);
  bool found = options.function.empty() ? solver.enter_module(options.module)
                                        : solver.enter_function(options.module, options.function);
  if (!found) {
    if (!options.function.empty() && solver.enter_module(options.module))
      throw Error("module " + options.module + " has no function `" + options.function + "`", Exit::usage);
    // MODULE alone that is no module: the nearest entry it may mean (pkg.mod.func).
    std::string near;
    for (size_t dot = options.module.rfind('.'); options.function.empty() && dot != std::string::npos && dot > 0;
         dot = options.module.rfind('.', dot - 1)) {
      if (!texts.text(options.module.substr(0, dot))) continue;
      near = options.module.substr(0, dot) + ":" + options.module.substr(dot + 1);
      break;
    }
    throw Error("entry `" + options.module + (options.function.empty() ? "" : ":" + options.function) +
                    "`: no module `" + options.module + "` in the environment" +
                    (near.empty() ? std::string("; an entry is MODULE or MODULE:FUNCTION, e.g. flashinfer.fp4_quantization:fp4_quantize")
                                  : "; did you mean " + near + "?"),
                Exit::usage);
  }
  solver.solve();

  CallGraph g;
  auto reached = solver.reached_scopes();
  uint32_t entry = UINT32_MAX;
  for (uint32_t sc : reached) {
    const Module& m = solver.module_of(sc);
    const Scope& s = solver.scope(sc);
    if (m.name == options.module &&
        (options.function.empty() ? s.kind == Scope::module : s.kind != Scope::module && s.qualified == options.function))
      entry = sc;
  }
  // Breadth first from the entry over the edges: each scope's shortest chain.
  std::map<uint32_t, std::vector<const FlowEdge*>> out;
  for (auto& e : solver.edges()) out[e.from].push_back(&e);
  // A module entry's imports ran its program's other modules' top levels too (a script's
  // modules beside it): each is a root. A library's import-time code is not the entry's.
  std::map<uint32_t, const FlowEdge*> parent;
  std::deque<uint32_t> todo{entry};
  parent[entry] = nullptr;
  if (options.function.empty())
    for (uint32_t sc : reached)
      if (solver.scope(sc).kind == Scope::module && solver.is_program(sc) && !parent.count(sc)) {
        parent[sc] = nullptr;
        todo.push_back(sc);
      }
  std::vector<uint32_t> order;
  while (!todo.empty()) {
    uint32_t x = todo.front();
    todo.pop_front();
    order.push_back(x);
    for (const FlowEdge* e : out[x])
      if (!parent.count(e->to)) {
        parent[e->to] = e;
        todo.push_back(e->to);
      }
  }
  // What the entry reaches by calls is the graph; for a function entry, a library
  // module's code that only an import ran (its top level) is not the entry's.
  for (uint32_t sc : order) {
    const Module& m = solver.module_of(sc);
    const Scope& s = solver.scope(sc);
    g.walked.push_back({node_name(solver, sc), m.file, s.line, s.end_line});
  }
  for (auto& e : solver.edges())
    if (parent.count(e.from)) g.edges.push_back({node_name(solver, e.from), node_name(solver, e.to), e.line, ""});
  for (auto& x : solver.external_calls()) {
    if (!parent.count(x.scope)) continue;
    const Rule* r = rules.match(x.name);
    if (!r) continue;
    Chain c;
    std::vector<Step> rev{step_of(solver, x.scope, x.line)};
    for (uint32_t at = x.scope; parent[at];) {
      const FlowEdge* e = parent[at];
      rev.push_back(step_of(solver, e->from, e->line));
      at = e->from;
    }
    c.steps.assign(rev.rbegin(), rev.rend());
    c.operation = x.name;
    c.rule = *r;
    g.chains.push_back(std::move(c));
  }
  std::stable_sort(g.chains.begin(), g.chains.end(), [](const Chain& a, const Chain& b) {
    if (a.steps.size() != b.steps.size()) return a.steps.size() < b.steps.size();
    return a.operation < b.operation;
  });
  for (auto& u : solver.unfollowed()) {
    if (!parent.count(u.scope)) continue;
    const Module& m = solver.module_of(u.scope);
    Unresolved x;
    x.function = node_name(solver, u.scope);
    x.file = m.file;
    x.root = m.root;
    x.line = u.line;
    x.call = u.text;
    x.why = u.why;
    g.unresolved.push_back(std::move(x));
  }
  if (solver.cut()) {
    // Said as a call not followed, so the answer is incomplete (and --strict exits 3).
    Unresolved x;
    x.function = node_name(solver, entry);
    x.file = solver.module_of(entry).file;
    x.root = solver.module_of(entry).root;
    x.call = "(the analysis)";
    x.why = "stopped at its limit of values held; what it had found is shown";
    x.limit = true;
    g.unresolved.push_back(std::move(x));
  }
  g.functions = order.size();
  g.modules = solver.modules_loaded();
  return g;
}

}  // namespace sitepatch::audit::flow
