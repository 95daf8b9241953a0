// The walk: breadth first from the entry, one wave of module loads per round of
// lookups that needed them, so a remote environment costs one round trip a wave.
// Breadth first makes the first path to each function a shortest one; a function
// reached again is not walked again, which also ends cycles.
#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "audit/walker.hpp"
#include "sitepatch/audit/graph.hpp"
#include "sitepatch/audit/scan.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit {
namespace walking {

CallGraph Walker::run() {
  auto [mod, fn] = entry();
  nodes_.emplace_back(Key{mod, fn}, 0);
  ids_[Key{mod, fn}] = 0;
  // Breadth first, then the overrides of the methods reached by dispatch among every
  // class read so far, and again from what they reach, until no new one is found.
  std::vector<int> level = {0};
  do {
    walk_from(std::move(level));
    level = dispatch_round();
    if (level.empty()) level = truth_round();
  } while (!level.empty());
  unfollowed_implicits();
  unfollowed_dispatches();
  missing_modules();
  return result();
}

void Walker::walk_from(std::vector<int> level) {
  while (!level.empty()) {
    std::vector<int> waiting = level;
    while (!waiting.empty()) {
      std::vector<int> again;
      for (int id : waiting)
        if (!expand(id)) again.push_back(id);
      if (again.empty()) break;
      if (r_.wanted.empty()) throw Error("internal: audit walk waits for nothing");
      load_wanted();
      waiting = std::move(again);
    }
    std::vector<int> next;
    for (int id : level) {
      int lv = nodes_[id].level;
      if (o_.depth > 0 && lv + 1 >= o_.depth) {
        for (auto& c : nodes_[id].calls) beyond_ += !ids_.count(c.key);
        continue;
      }
      for (auto& c : nodes_[id].calls) {
        if (ids_.count(c.key)) continue;
        int k = int(nodes_.size());
        ids_[c.key] = k;
        nodes_.emplace_back(c.key, lv + 1, id, c.line);
        next.push_back(k);
      }
    }
    level = std::move(next);
  }
}

void Walker::load_wanted() {
  std::vector<std::string> names;
  for (auto& w : r_.wanted)
    if (!r_.modules.count(w)) names.push_back(w);
  r_.wanted.clear();
  if (names.empty()) return;
  auto got = source_.load(names);
  ++waves_;
  for (size_t i = 0; i < names.size(); ++i) r_.modules[names[i]] = std::move(got[i]);
  // A name a module does not define is looked up in its `from m import *` sources
  // next: have them come with the next wave rather than a wave of their own.
  for (auto& n : names)
    if (auto& m = r_.modules[n])
      for (auto& star : m->stars)
        if (!r_.modules.count(star)) r_.wanted.insert(star);
}

std::pair<const ModuleFacts*, int> Walker::entry() {
  r_.wanted.insert(o_.module);
  load_wanted();
  auto& m = r_.modules[o_.module];
  if (!m) {
    auto near = util::nearest(o_.module, source_.siblings(o_.module));
    throw Error("module `" + o_.module + "` not found in the environment" +
                (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?"));
  }
  for (size_t i = 1; i < m->functions.size(); ++i)
    if (m->functions[i].qualified == o_.function) return {&*m, int(i)};
  // A name the module imports (a re-export) leads to its definition.
  while (true) {
    Target t = r_.in_scope(*m, 0, o_.function);
    if (t.kind == Target::pending) {
      load_wanted();
      continue;
    }
    if (t.kind == Target::function) return {t.mod, t.index};
    break;
  }
  std::string where = " in module " + o_.module + " (" + m->file + ")";
  if (m->functions[0].is_local(o_.function))
    throw Error("`" + o_.function + "`" + where + " is a variable, not a function defined with def");
  if (m->class_names.count(o_.function))
    throw Error("`" + o_.function + "`" + where + " is a class; name one of its methods (" + o_.function +
                ".__init__, ...)");
  std::vector<std::string> names;
  for (size_t i = 1; i < m->functions.size(); ++i) names.push_back(m->functions[i].qualified);
  auto near = util::nearest(o_.function, names);
  throw Error("function `" + o_.function + "` is not defined in module " + o_.module + " (" + m->file + ")" +
              (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?"));
}

bool Walker::flag(Node& n, const Ref& ref, const std::string& name) {
  if (name.empty() || !performs(ref, name)) return false;
  if (const Rule* rule = rules_.match(name)) {
    n.flagged.push_back({ref.line, name, *rule, &ref});
    return true;
  }
  return false;
}

void Walker::note_dispatch(Node& fresh, const Ref& ref, const Target& t) {
  const Function& F = t.mod->functions[size_t(t.index)];
  if (F.cls < 0 || ref.kind != Ref::call) return;
  std::string name = F.qualified.substr(F.qualified.rfind('.') + 1);
  if (name == "__init__" || name == "__new__") return;
  size_t dot = ref.name.rfind('.');
  if (dot == std::string::npos) return;
  std::string head = ref.name.substr(0, dot);
  if (head == "super" || (!ref.on_result && std::isupper(static_cast<unsigned char>(head[head.rfind('.') + 1]))))
    return;
  fresh.dispatches.push_back({t.mod, F.cls, name, ref.line, F.abstract, ref.name, &ref});
}

bool Walker::follow(Node& fresh, const Ref& ref, const Target& t, const std::string& who) {
  auto unresolved = [&](const std::string& why, bool limit = false) {
    // "d.[]" is how facts spell an item of d; users wrote d[k].
    std::string call = ref.name;
    for (size_t at; (at = call.find(".[]")) != std::string::npos;) call.replace(at, 3, "[...]");
    for (size_t at; (at = call.find("[]")) != std::string::npos;) call.replace(at, 2, "[...]");
    if (util::ends_with(call, ".[getattr]")) call = "getattr(" + call.substr(0, call.size() - 10) + ", ...)";
    fresh.unresolved.push_back(Unresolved{who, fresh.mod->file, fresh.mod->root, ref.line, call, why, limit, ""});
    fresh.unresolved_refs.push_back(&ref);
  };
  switch (t.kind) {
    case Target::pending: return false;
    case Target::function:
      // Reading an attribute runs a property, not a method it names.
      if (ref.read && !t.mod->functions[size_t(t.index)].is_property) break;
      if (!flag(fresh, ref, name_of(*t.mod, t.index))) {
        fresh.calls.push_back({{t.mod, t.index, t.recv_mod, t.recv_cls}, ref.line, &ref, ""});
        pass_arguments(fresh, ref, t);
        // A receiver of a known class was resolved by its MRO: no other class's method runs.
        if (!t.recv_mod) note_dispatch(fresh, ref, t);
        else instantiated_.insert({t.recv_mod, t.recv_cls});
      }
      break;
    case Target::klass: {
      if (ref.kind != Ref::call) break;
      if (flag(fresh, ref, t.mod->name + "." + t.mod->classes[t.index].qualified)) break;
      instantiated_.insert({t.mod, t.index});
      // Making an instance runs __new__ and __init__, wherever the class defines them.
      for (const char* special : {"__new__", "__init__"}) {
        Target init = r_.method(*t.mod, t.index, special);
        if (init.kind == Target::pending) return false;
        if (init.kind == Target::function) {
          fresh.calls.push_back({{init.mod, init.index, t.mod, t.index}, ref.line, &ref, ""});
          pass_arguments(fresh, ref, init);
        }
      }
      break;
    }
    case Target::external:
      if (ref.read || flag(fresh, ref, t.name) || ref.kind != Ref::call) break;
      if (t.index == detail::kNoModuleFile) fresh.externals.push_back({&ref, t.name});
      if (t.index == detail::kInherited)
        unresolved("attribute of " + ref.name.substr(0, ref.name.find('.')) + ", not a method it defines (" +
                   t.name.substr(0, t.name.rfind('.')) + " may define it)");
      // Bound by a star import of a compiled module: what it does is not in any source.
      if (t.index == detail::kCompiledGuess)
        unresolved("made by the compiled module " + t.compiled + " (a star import binds it), which the walk cannot read");
      break;
    case Target::circular:
      // Python resolves it (the package imports), this tool did not: say so loudly.
      unresolved("resolves in a circle: " + t.name, true);
      break;
    case Target::lazy:
      // Reading the name runs the module's __getattr__; what it returns is not known.
      fresh.calls.push_back({{t.mod, t.index}, ref.line, &ref, ""});
      if (ref.kind == Ref::call) {
        const Function& G = t.mod->functions[size_t(t.index)];
        unresolved(t.name + " is made at run time by " + t.mod->name + ":" + G.qualified +
                   (G.cls >= 0 ? "" : " (a lazy export)"));
      }
      break;
    case Target::unknown:
    case Target::missing:
      if (ref.kind == Ref::call) unresolved(t.name.empty() ? "not defined" : t.name);
      break;
    case Target::module: break;
  }
  return true;
}

bool Walker::expand(int id) {
  Node& n = nodes_[id];
  const ModuleFacts& m = *n.mod;
  const Function& F = m.functions[n.fn];
  Node fresh(n.key(), n.level, n.parent, n.parent_line);
  // Inside a method reached through a receiver of a known class, `self` is that class.
  r_.self_as = n.recv_mod ? detail::SelfAs{n.mod, n.fn, n.recv_mod, n.recv_cls} : detail::SelfAs{};
  // And its parameters hold what its first caller passed, where its code says nothing.
  auto args = passed_.find({n.mod, n.fn});
  r_.params = args == passed_.end() ? nullptr : &args->second;
  r_.params_mod = n.mod;
  r_.params_fn = n.fn;
  struct Reset {
    detail::Resolver& r;
    ~Reset() {
      r.self_as = {};
      r.params = nullptr;
    }
  } reset{r_};
  bool complete = true;
  std::string who = m.name + ":" + F.qualified;
  for (const Ref& ref : F.refs) {
    if (ref.kind == Ref::dynamic) {
      fresh.unresolved.push_back(Unresolved{who, m.file, m.root, ref.line, ref.name, "dynamic call", false, ""});
      fresh.unresolved_refs.push_back(&ref);
      continue;
    }
    if (ref.kind == Ref::decorator && ignorable_decorator(detail::spelled(m, n.fn, ref.name))) continue;
    if (ref.escapes) continue;  // `d[k] = self.meth`: the later call is what runs it
    if (ref.implicit) {
      // `if x:` runs x.__bool__ only where x's class defines one: followed when the
      // class is known; else __bool__ and __len__ into the classes the walk makes
      // (truth_round), the others counted (unfollowed_implicits).
      r_.also.clear();
      Target t = detail::call_target(r_, m, n.fn, ref);
      r_.also.clear();
      if (t.kind == Target::pending) {
        complete = false;
        continue;
      }
      if (t.kind == Target::function) {
        if (!follow(fresh, ref, t, who)) complete = false;
      } else if (t.kind != Target::external) {
        fresh.implicits.push_back(&ref);
      }
      continue;
    }
    // What the module's own imports say it is: the same decision as `audit --package`.
    auto uses = ref.read ? std::vector<Use>{} : flagged_uses(m, n.fn, ref, rules_);
    if (!uses.empty()) {
      for (auto& u : uses) fresh.flagged.push_back({ref.line, u.operation, *u.rule, &ref});
      continue;
    }
    r_.also.clear();
    Target t = detail::call_target(r_, m, n.fn, ref);
    std::vector<Target> branches = std::move(r_.also);
    r_.also.clear();
    if (!follow(fresh, ref, t, who)) complete = false;
    for (const Target& b : branches)
      if (!follow(fresh, ref, b, who)) complete = false;
  }
  if (!complete) return false;
  n = std::move(fresh);
  return true;
}

std::vector<Step> Walker::path_to(int id) const {
  std::vector<Step> steps;
  int line = 0;
  for (int k = id; k >= 0; k = nodes_[k].parent) {
    const Node& n = nodes_[k];
    steps.push_back(Step{n.mod->name, n.mod->functions[n.fn].qualified, n.mod->file, n.mod->root, line,
                         via_.count(k) ? via_.at(k) : ""});
    line = n.parent_line;
  }
  std::reverse(steps.begin(), steps.end());
  return steps;
}

detail::Branches Walker::branches() const {
  std::vector<const Function*> fns;
  std::vector<detail::CallEdge> edges;
  for (size_t id = 0; id < nodes_.size(); ++id) {
    fns.push_back(&nodes_[id].mod->functions[size_t(nodes_[id].fn)]);
    for (const Call& c : nodes_[id].calls)
      if (auto it = ids_.find(c.key); it != ids_.end()) edges.push_back({int(id), it->second, c.ref});
  }
  return detail::Branches(std::move(fns), std::move(edges), 0);
}

void Walker::reroute(const detail::Branches& b) {
  std::vector<bool> seen(nodes_.size(), false);
  std::vector<std::vector<size_t>> out(nodes_.size());
  for (size_t e = 0; e < b.edges().size(); ++e)
    if (b.live_edge(e)) out[size_t(b.edges()[e].from)].push_back(e);
  std::vector<int> level = {0};
  seen[0] = true;
  while (!level.empty()) {
    std::vector<int> next;
    for (int v : level)
      for (size_t e : out[size_t(v)]) {
        int w = b.edges()[e].to;
        if (seen[size_t(w)]) continue;
        seen[size_t(w)] = true;
        const Ref* r = b.edges()[e].ref;
        nodes_[size_t(w)].parent = v;
        // The line of the call, and how dispatch reached it, from the caller's calls.
        for (const Call& c : nodes_[size_t(v)].calls)
          if (c.ref == r && ids_.at(c.key) == w) {
            nodes_[size_t(w)].parent_line = c.line;
            if (c.via.empty()) via_.erase(w);
            else via_[w] = c.via;
            break;
          }
        next.push_back(w);
      }
    level = std::move(next);
  }
}

void Walker::rule_out(CallGraph& g, const detail::Branches& b) {
  for (size_t id = 0; id < nodes_.size(); ++id) {
    Node& n = nodes_[id];
    if (!b.live(int(id))) continue;
    std::string who = n.mod->name + ":" + n.mod->functions[size_t(n.fn)].qualified;
    auto out = [&](int line, const std::string& call, const std::string& why) {
      g.ruled_out.push_back(RuledOut{who, n.mod->file, n.mod->root, line, call, why});
    };
    std::vector<Flagged> kept;
    for (Flagged& f : n.flagged) {
      std::string why = b.ruled_out(int(id), f.ref ? f.ref->guard : "");
      if (why.empty()) kept.push_back(std::move(f));
      else out(f.line, f.op, why);
    }
    n.flagged = std::move(kept);
    std::vector<Unresolved> left;
    for (size_t k = 0; k < n.unresolved.size(); ++k) {
      const Ref* r = n.unresolved_refs[k];
      std::string why = b.ruled_out(int(id), r ? r->guard : "");
      if (why.empty()) left.push_back(std::move(n.unresolved[k]));
      else out(n.unresolved[k].line, n.unresolved[k].call, why);
    }
    n.unresolved = std::move(left);
    n.unresolved_refs.clear();
  }
  for (size_t e = 0; e < b.edges().size(); ++e) {
    const auto& edge = b.edges()[e];
    if (b.live_edge(e) || !b.live(edge.from) || b.live(edge.to) || !edge.ref) continue;
    const Node& n = nodes_[size_t(edge.from)];
    std::string why = b.ruled_out(edge.from, edge.ref->guard);
    if (why.empty()) continue;
    g.ruled_out.push_back(RuledOut{n.mod->name + ":" + n.mod->functions[size_t(n.fn)].qualified, n.mod->file,
                                   n.mod->root, edge.ref->line, edge.ref->name, why});
  }
  std::stable_sort(g.ruled_out.begin(), g.ruled_out.end(), [](const RuledOut& x, const RuledOut& y) {
    return std::tie(x.file, x.line) < std::tie(y.file, y.line);
  });
  g.ruled_out.erase(std::unique(g.ruled_out.begin(), g.ruled_out.end(),
                                [](const RuledOut& x, const RuledOut& y) {
                                  return x.file == y.file && x.line == y.line && x.call == y.call;
                                }),
                    g.ruled_out.end());
}

CallGraph Walker::result() {
  CallGraph g;

  detail::Branches b = branches();
  if (b.any_ruled_out()) reroute(b);
  rule_out(g, b);
  // A function reached through two receivers is two nodes: listed, counted and its
  // unfollowed calls said once.
  std::set<std::string> walked, said;
  auto walked_once = [&](const Node& n) {
    const Function& F = n.mod->functions[n.fn];
    std::string name = n.mod->name + ":" + F.qualified;
    if (walked.insert(name).second) g.walked.push_back(Walked{name, n.mod->file, F.line, F.end_line});
    return name;
  };
  for (size_t id = 0; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    std::string name = walked_once(n);
    if (!b.live(int(id))) continue;
    for (const auto& f : n.flagged) {
      Chain c;
      c.steps = path_to(int(id));
      c.steps.back().line = f.line;
      c.operation = f.op;
      c.rule = f.rule;
      g.chains.push_back(std::move(c));
    }
    for (const Unresolved& u : n.unresolved)
      if (said.insert(u.function + "\n" + std::to_string(u.line) + "\n" + u.call + "\n" + u.why).second)
        g.unresolved.push_back(u);
    for (const Call& c : n.calls)
      if (auto to = ids_.find(c.key); to != ids_.end() && b.live(to->second)) {
        std::string callee = c.key.mod->name + ":" + c.key.mod->functions[size_t(c.key.fn)].qualified;
        if (said.insert(name + "\n" + callee + "\n" + std::to_string(c.line)).second)
          g.edges.push_back(Edge{name, callee, c.line, c.via});
      }
  }
  auto text = [](const Chain& c) {
    std::string s;
    for (auto& st : c.steps) s += st.name() + "@" + std::to_string(st.line) + " ";
    return s + c.operation;
  };
  std::stable_sort(g.chains.begin(), g.chains.end(), [&](const Chain& a, const Chain& b) {
    if (a.steps.size() != b.steps.size()) return a.steps.size() < b.steps.size();
    return text(a) < text(b);
  });
  g.chains.erase(std::unique(g.chains.begin(), g.chains.end(),
                             [&](const Chain& a, const Chain& b) { return text(a) == text(b); }),
                 g.chains.end());
  // The modules not installed that the reported calls go into (a ruled-out function's
  // are not among them).
  std::set<std::string> missing;
  for (const Unresolved& u : g.unresolved)
    if (!u.missing.empty()) missing.insert(u.missing);
  g.not_installed.assign(missing.begin(), missing.end());
  g.cycles = cycles();
  g.functions = g.walked.size();
  for (auto& [name, m] : r_.modules)
    if (m) ++g.modules;
  g.waves = waves_;
  g.beyond_depth = beyond_;
  return g;
}

std::vector<std::vector<std::string>> Walker::cycles() const {
  int count = int(nodes_.size()), index = 0;
  std::vector<int> idx(count, -1), low(count, 0), stack;
  std::vector<bool> on(count, false);
  std::vector<std::vector<int>> found;
  // Tarjan's strongly connected components, with a stack of its own (a call chain of
  // 200,000 functions overflowed the thread's stack when this recursed): each entry is
  // a function and how many of its calls were looked at.
  auto callee_id = [&](int v, size_t k) {
    auto it = ids_.find(nodes_[v].calls[k].key);
    return it == ids_.end() ? -1 : it->second;
  };
  std::vector<std::pair<int, size_t>> work;
  auto enter = [&](int v) {
    idx[v] = low[v] = index++;
    stack.push_back(v);
    on[v] = true;
    work.push_back({v, 0});
  };
  auto finish = [&](int v) {
    if (low[v] != idx[v]) return;
    std::vector<int> comp;
    int w;
    do {
      w = stack.back();
      stack.pop_back();
      on[w] = false;
      comp.push_back(w);
    } while (w != v);
    bool self = false;
    for (auto& c : nodes_[v].calls) self = self || c.key == nodes_[v].key();
    if (comp.size() > 1 || self) {
      std::sort(comp.begin(), comp.end());
      found.push_back(comp);
    }
  };
  for (int root = 0; root < count; ++root) {
    if (idx[root] >= 0) continue;
    enter(root);
    while (!work.empty()) {
      auto& [v, k] = work.back();
      if (k < nodes_[v].calls.size()) {
        int w = callee_id(v, k++);
        if (w < 0) continue;
        if (idx[w] < 0) enter(w);  // its low reaches v's when it is done, below
        else if (on[w]) low[v] = std::min(low[v], idx[w]);
        continue;
      }
      int done = v;
      work.pop_back();
      finish(done);
      if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[done]);
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::vector<std::string>> out;
  for (auto& comp : found) {
    std::vector<std::string> names;
    for (int v : comp) names.push_back(nodes_[v].mod->name + ":" + nodes_[v].mod->functions[nodes_[v].fn].qualified);
    out.push_back(names);
  }
  return out;
}
}  // namespace walking


CallGraph walk(ModuleSource& source, const RuleSet& rules, const WalkOptions& options) {
  return walking::Walker(source, rules, options).run();
}

}  // namespace sitepatch::audit
