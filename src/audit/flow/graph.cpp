// audit's CallGraph from the value-flow solver's fixpoint: every scope reached is walked,
// every call of a function value an edge, every call out of the program a rule flags a
// chain (the shortest path of edges from the entry to the scope making it), every call
// of a value nobody knows, or into a module compiled or not installed, a call not followed.
#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <set>

#include "audit/flow/graph.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::flow {

namespace {

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

// Breadth first from the entry over the edges: each scope's shortest chain (its parent
// edge), no deeper than `depth` functions when it is set.
struct Reach {
  std::map<uint32_t, const FlowEdge*> parent;
  std::vector<uint32_t> order;
  size_t beyond_depth = 0;
};

// A function of the program a rule names (a library's JIT entry, say): the chain stops at
// the call of it, as at a call out of the program, and the walk does not go in.
std::set<uint32_t> ruled_scopes(const Solver& solver, const RuleSet& rules) {
  std::set<uint32_t> out;
  for (uint32_t sc : solver.reached_scopes()) {
    const Scope& s = solver.scope(sc);
    if (s.kind != Scope::module && rules.match(solver.module_of(sc).name + "." + s.qualified)) out.insert(sc);
  }
  return out;
}

Reach reach_from(const Solver& solver, uint32_t entry, const WalkOptions& options, const std::set<uint32_t>& ruled,
                 std::vector<ExternalCall>& ruled_calls) {
  std::map<uint32_t, std::vector<const FlowEdge*>> out;
  for (auto& e : solver.edges()) out[e.from].push_back(&e);
  Reach r;
  std::map<uint32_t, int> level;
  std::deque<uint32_t> todo{entry};
  r.parent[entry] = nullptr;
  level[entry] = 0;
  // A module entry's imports ran its program's other modules' top levels too (a script's
  // modules beside it): each is a root. A library's import-time code is not the entry's.
  if (options.function.empty())
    for (uint32_t sc : solver.reached_scopes())
      if (solver.scope(sc).kind == Scope::module && solver.is_program(sc) && !r.parent.count(sc)) {
        r.parent[sc] = nullptr;
        level[sc] = 0;
        todo.push_back(sc);
      }
  std::set<uint32_t> cut_off;
  while (!todo.empty()) {
    uint32_t x = todo.front();
    todo.pop_front();
    r.order.push_back(x);
    if (options.depth > 0 && level[x] + 1 >= options.depth) {
      for (const FlowEdge* e : out[x]) cut_off.insert(e->to);
      continue;
    }
    for (const FlowEdge* e : out[x]) {
      if (ruled.count(e->to) && e->to != entry) {
        const Scope& to = solver.scope(e->to);
        ruled_calls.push_back({x, e->line, 0, solver.module_of(e->to).name + "." + to.qualified, to.qualified});
        continue;
      }
      if (!r.parent.count(e->to)) {
        r.parent[e->to] = e;
        level[e->to] = level[x] + 1;
        todo.push_back(e->to);
      }
    }
  }
  for (uint32_t to : cut_off) r.beyond_depth += !r.parent.count(to);
  return r;
}

std::string operation_name(const std::string& name) {
  return util::starts_with(name, "builtins.") ? name.substr(9) : name;
}

void add_chains(CallGraph& g, Solver& solver, const RuleSet& rules, Reach& r, std::vector<ExternalCall> calls) {
  calls.insert(calls.end(), solver.external_calls().begin(), solver.external_calls().end());
  for (auto& x : calls) {
    if (!r.parent.count(x.scope) || exception_name(x.name)) continue;
    const Rule* rule = rules.match(x.name);
    if (!rule) continue;
    Chain c;
    std::vector<Step> rev{step_of(solver, x.scope, x.line)};
    for (uint32_t at = x.scope; r.parent[at];) {
      const FlowEdge* e = r.parent[at];
      rev.back().via = solver.via(e->from, e->to);
      rev.push_back(step_of(solver, e->from, e->line));
      at = e->from;
    }
    c.steps.assign(rev.rbegin(), rev.rend());
    c.operation = operation_name(x.name);
    c.rule = *rule;
    g.chains.push_back(std::move(c));
  }
  // Shortest first, then in the order of the code: the file and line of each step.
  std::stable_sort(g.chains.begin(), g.chains.end(), [](const Chain& a, const Chain& b) {
    if (a.steps.size() != b.steps.size()) return a.steps.size() < b.steps.size();
    for (size_t k = 0; k < a.steps.size(); ++k) {
      if (a.steps[k].file != b.steps[k].file) return a.steps[k].file < b.steps[k].file;
      if (a.steps[k].line != b.steps[k].line) return a.steps[k].line < b.steps[k].line;
    }
    return a.operation < b.operation;
  });
}

Unresolved unresolved_at(const Solver& solver, uint32_t scope, int line, const std::string& call, const std::string& why) {
  const Module& m = solver.module_of(scope);
  Unresolved x;
  x.function = node_name(solver, scope);
  x.file = m.file;
  x.root = m.root;
  x.line = line;
  x.call = call;
  x.why = why;
  return x;
}

// Calls out of the program into code this audit cannot read though it is the library's
// own: a compiled module's (its twin is what import loads) and a module not installed.
void add_unreadable_calls(CallGraph& g, const Solver& solver, const Lowering& lowering, ModuleTexts& texts,
                          const RuleSet& rules, Reach& r) {
  std::set<std::string> tops;
  for (auto& x : solver.external_calls())
    if (r.parent.count(x.scope) && x.name.find('.') != std::string::npos && !util::starts_with(x.name, "builtins."))
      tops.insert(x.name.substr(0, x.name.find('.')));
  std::vector<std::string> asked;
  auto identifier = [](const std::string& t) {
    return !t.empty() && !std::isdigit(static_cast<unsigned char>(t[0])) &&
           std::all_of(t.begin(), t.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  };
  for (auto& t : tops)
    if (!lowering.compiled(t) && identifier(t)) asked.push_back(t);
  auto missing = texts.not_installed(asked);
  std::set<std::string> gone(missing.begin(), missing.end());
  std::set<std::tuple<uint32_t, int, std::string>> seen;
  for (auto& x : solver.external_calls()) {
    if (!r.parent.count(x.scope) || !seen.insert({x.scope, x.line, x.text}).second) continue;
    std::string top = x.name.substr(0, x.name.find('.'));
    if (gone.count(top)) {
      Unresolved u = unresolved_at(solver, x.scope, x.line, x.text, "module " + top + " is not installed");
      u.missing = top;
      g.unresolved.push_back(std::move(u));
      continue;
    }
    if (solver.inherited_guess(x.name) && !rules.match(x.name)) {
      // No rule names it: what runs is not known, so it is counted, never dropped.
      std::string base = x.name.substr(0, x.name.rfind('.'));
      std::string what = util::starts_with(x.text, "self.") ? "attribute of self" : "attribute of an instance";
      g.unresolved.push_back(unresolved_at(solver, x.scope, x.line, x.text,
                                           what + ", not a method it defines (" + base + " may define it)"));
      continue;
    }
    if (solver.star_made(x.name)) {
      std::string mod = x.name.substr(0, x.name.rfind('.'));
      g.unresolved.push_back(unresolved_at(solver, x.scope, x.line, x.text,
                                           "made by the compiled module " + mod +
                                               " (a star import binds it), which the walk cannot read"));
      continue;
    }
    // The longest compiled module the name is in.
    for (size_t dot = x.name.rfind('.'); dot != std::string::npos && dot > 0; dot = x.name.rfind('.', dot - 1)) {
      std::string mod = x.name.substr(0, dot);
      const auto* twin = lowering.twin(mod);
      if (!twin) continue;
      std::string why = operation_name(x.name) + " is compiled: " + twin->first + " is what import loads, not " +
                        twin->second + ", and the walk cannot read it";
      g.unresolved.push_back(unresolved_at(solver, x.scope, x.line, x.text, why));
      break;
    }
  }
  g.not_installed.assign(gone.begin(), gone.end());
}

// Calls the callers' literal arguments rule out: the flagged operations and the program's
// functions they would have reached (functions reached another way are walked anyway).
void add_ruled_out(CallGraph& g, const Solver& solver, const RuleSet& rules, Reach& r) {
  for (auto& x : solver.ruled_out()) {
    if (!r.parent.count(x.scope)) continue;
    const Module& m = solver.module_of(x.scope);
    auto out = [&](const std::string& call, const std::string& rule) {
      g.ruled_out.push_back(RuledOut{node_name(solver, x.scope), m.file, m.root, x.line, call, x.why, rule});
    };
    for (auto& name : x.externals)
      if (const Rule* rule = rules.match(name)) out(operation_name(name), rule->id);
    if (std::any_of(x.functions.begin(), x.functions.end(), [&](uint32_t f) { return !r.parent.count(f); }))
      out(x.text, "");
  }
  std::stable_sort(g.ruled_out.begin(), g.ruled_out.end(), [](const RuledOut& a, const RuledOut& b) {
    return std::tie(a.file, a.line) < std::tie(b.file, b.line);
  });
  g.ruled_out.erase(std::unique(g.ruled_out.begin(), g.ruled_out.end(),
                                [](const RuledOut& a, const RuledOut& b) {
                                  return a.file == b.file && a.line == b.line && a.call == b.call;
                                }),
                    g.ruled_out.end());
}

}  // namespace

CallGraph walk(ModuleTexts& texts, const RuleSet& rules, const WalkOptions& options) {
  Lowering source(texts);
  Solver solver(source);
  WalkOptions at = enter(solver, texts, options);
  solver.solve();

  CallGraph g;
  uint32_t entry = UINT32_MAX;
  for (uint32_t sc : solver.reached_scopes()) {
    const Module& m = solver.module_of(sc);
    const Scope& s = solver.scope(sc);
    if (m.name == at.module &&
        (at.function.empty() ? s.kind == Scope::module : s.kind != Scope::module && s.qualified == at.function))
      entry = sc;
  }
  std::vector<ExternalCall> ruled_calls;
  Reach r = reach_from(solver, entry, at, ruled_scopes(solver, rules), ruled_calls);
  for (uint32_t sc : r.order) {
    const Scope& s = solver.scope(sc);
    g.walked.push_back({node_name(solver, sc), solver.module_of(sc).file, s.line, s.end_line});
  }
  for (auto& e : solver.edges())
    if (r.parent.count(e.from) && r.parent.count(e.to))
      g.edges.push_back({node_name(solver, e.from), node_name(solver, e.to), e.line, solver.via(e.from, e.to)});
  add_chains(g, solver, rules, r, std::move(ruled_calls));
  for (auto& u : solver.unfollowed())
    if (r.parent.count(u.scope)) {
      g.unresolved.push_back(unresolved_at(solver, u.scope, u.line, u.text, u.why));
      g.unresolved.back().limit = u.limit;
    }
  add_unreadable_calls(g, solver, source, texts, rules, r);
  add_ruled_out(g, solver, rules, r);
  if (solver.cut()) {
    // Said as a call not followed, so the answer is incomplete (and --strict exits 3).
    Unresolved x = unresolved_at(solver, entry, 0, "(the analysis)",
                                 "stopped at its limit of values held; what it had found is shown");
    x.limit = true;
    g.unresolved.push_back(std::move(x));
  }
  g.cycles = cycles_of(g);
  g.functions = r.order.size();
  g.modules = solver.modules_loaded();
  g.beyond_depth = r.beyond_depth;
  return g;
}

}  // namespace sitepatch::audit::flow
