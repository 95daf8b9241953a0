// The walk: breadth first from the entry, one wave of module loads per round of
// lookups that needed them, so a remote environment costs one round trip a wave.
// Breadth first makes the first path to each function a shortest one; a function
// reached again is not walked again, which also ends cycles.
#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "audit/branches.hpp"
#include "audit/dispatch.hpp"
#include "audit/resolve.hpp"
#include "sitepatch/audit/graph.hpp"
#include "sitepatch/audit/scan.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit {

using detail::Resolver;
using detail::Target;

namespace {

// A function as the walk visits it: with the class of its receiver when the call site
// knows it (`FileLock(p).acquire()`: inside acquire, self is a FileLock and
// `self._acquire()` resolves by FileLock's MRO), so one method reached from two
// receivers is two nodes.
struct Key {
  const ModuleFacts* mod = nullptr;
  int fn = -1;
  const ModuleFacts* recv_mod = nullptr;  // null: the receiver's class is not known
  int recv_cls = -1;
  bool operator<(const Key& o) const {
    return std::tie(mod, fn, recv_mod, recv_cls) < std::tie(o.mod, o.fn, o.recv_mod, o.recv_cls);
  }
  bool operator==(const Key& o) const {
    return mod == o.mod && fn == o.fn && recv_mod == o.recv_mod && recv_cls == o.recv_cls;
  }
};

struct Flagged {
  int line;
  std::string op;
  Rule rule;
  const Ref* ref;
};

// One call from a walked function to another.
struct Call {
  Key key;
  int line;
  const Ref* ref;   // the call as written (its guard and literal arguments); null for none
  std::string via;  // "via subclass ..." when dispatch reaches it
};

// `self.m()` / `obj.m()` reaching method m of class cls: a subclass's m may run instead.
struct Dispatch {
  const ModuleFacts* mod;
  int cls;
  std::string name;
  int line;
  bool abstract;
  std::string call;  // as written
  const Ref* ref;
  size_t found = 0;  // overrides followed
  size_t more = 0;   // overrides past the bound, not followed
};

struct Node {
  Node(const Key& k, int lv, int p = -1, int pl = 0)
      : mod(k.mod), fn(k.fn), recv_mod(k.recv_mod), recv_cls(k.recv_cls), level(lv), parent(p), parent_line(pl) {}
  Key key() const { return {mod, fn, recv_mod, recv_cls}; }
  const ModuleFacts* mod;
  int fn;
  const ModuleFacts* recv_mod;
  int recv_cls;
  int level;
  int parent;
  int parent_line;  // where the parent calls it
  std::vector<Call> calls;
  std::vector<Flagged> flagged;
  std::vector<Unresolved> unresolved;
  std::vector<const Ref*> unresolved_refs;  // the use each one is (its guard), or null
  std::vector<Dispatch> dispatches;
  std::vector<std::pair<const Ref*, std::string>> externals;  // calls out of the program no rule flags
  std::vector<const Ref*> implicits;  // special methods of a receiver whose class is not known
};

// Overrides followed from one call site; past it, the rest are said to be left out.
constexpr size_t kMaxOverrides = 16;

bool ignorable_decorator(const std::string& spelled) {
  return util::starts_with(spelled, "functools.") || spelled == "property" || spelled == "staticmethod" ||
         spelled == "classmethod" || util::starts_with(spelled, "abc.") || util::starts_with(spelled, "typing.");
}

class Walker {
 public:
  Walker(ModuleSource& source, const RuleSet& rules, const WalkOptions& o) : source_(source), rules_(rules), o_(o) {}

  CallGraph run() {
    auto [mod, fn] = entry();
    nodes_.emplace_back(Key{mod, fn}, 0);
    ids_[Key{mod, fn}] = 0;
    // Breadth first, then the overrides of the methods reached by dispatch among every
    // class read so far, and again from what they reach, until no new one is found.
    std::vector<int> level = {0};
    do {
      walk_from(std::move(level));
      level = dispatch_round();
      if (level.empty()) level = implicit_round();
    } while (!level.empty());
    unfollowed_dispatches();
    missing_modules();
    return result();
  }

 private:
  void walk_from(std::vector<int> level) {
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

  // What a call passes (`load(Path(p))`, `load(root)` where root's class is known) is
  // what the callee's parameter holds, when nothing in the callee says (one level: the
  // first caller that passes one decides).
  void pass_arguments(const Node& caller, const Ref& ref, const Target& callee) {
    if (ref.values.empty()) return;
    const Function& G = callee.mod->functions[size_t(callee.index)];
    size_t offset = G.cls >= 0 && !G.self_name.empty() && !G.params.empty() && G.params[0] == G.self_name ? 1 : 0;
    auto& into = passed_[{callee.mod, callee.index}];
    for (const std::string& item : util::split(ref.values, ' ')) {
      size_t eq = item.find('=');
      if (eq == std::string::npos) continue;
      std::string slot = item.substr(0, eq), how = item.substr(eq + 1), name;
      if (slot[0] == '#') {
        size_t k = size_t(std::stoi(slot.substr(1))) + offset;
        if (k < G.params.size()) name = G.params[k];
      } else if (std::find(G.params.begin(), G.params.end(), slot) != G.params.end()) {
        name = slot;
      }
      if (name.empty() || name[0] == '*' || G.types.count(name) || into.count(name)) continue;
      Target v = util::starts_with(how, "call:") ? r_.instance(*caller.mod, caller.fn, how)
                                                 : r_.value_of(*caller.mod, caller.fn, how.substr(3));
      if (v.kind != Target::klass && v.kind != Target::external) continue;
      v.exact = false;  // another caller may pass a subclass's instance
      into[name] = v;
    }
  }

  // Adds node `id`'s call to `key` (unless it has it) and, when the walk has not reached
  // `key` yet, a node for it: its index, else -1.
  int reach(size_t id, const Key& key, int line, const Ref* ref, const std::string& via) {
    auto& calls = nodes_[id].calls;
    if (std::any_of(calls.begin(), calls.end(), [&](auto& c) { return c.key == key; })) return -1;
    calls.push_back({key, line, ref, via});
    if (ids_.count(key)) return -1;
    int lv = nodes_[id].level;
    if (o_.depth > 0 && lv + 1 >= o_.depth) {
      ++beyond_;
      return -1;
    }
    int n = int(nodes_.size());
    ids_[key] = n;
    nodes_.emplace_back(key, lv + 1, int(id), line);
    via_[n] = via;
    return n;
  }

  // New nodes for overrides not yet followed from each dispatch site.
  std::vector<int> dispatch_round() {
    bool any = std::any_of(nodes_.begin(), nodes_.end(), [](const Node& n) { return !n.dispatches.empty(); });
    if (!any) return {};
    find_subclasses();
    detail::SubclassIndex index(r_, [this] { load_wanted(); });
    std::vector<int> fresh;
    for (size_t id = 0; id < nodes_.size(); ++id) {
      for (size_t k = 0; k < nodes_[id].dispatches.size(); ++k) {
        Dispatch& d = nodes_[id].dispatches[k];
        auto found = index.overrides(*d.mod, d.cls, d.name);
        // The receiver's class is not known here: the overrides of the classes the walked
        // code makes; where it makes none of them, every one (and the step says so).
        std::vector<detail::Override> made;
        for (auto& o : found)
          if (int cls = o.mod->functions[size_t(o.fn)].cls; cls >= 0 && index.made(*o.mod, cls, instantiated_))
            made.push_back(o);
        std::string how = !found.empty() && made.empty() ? " (none of them is made in the walked code)" : "";
        if (!made.empty()) found = std::move(made);
        d.more = found.size() > kMaxOverrides ? found.size() - kMaxOverrides : 0;
        if (found.size() > kMaxOverrides) found.resize(kMaxOverrides);
        d.found = found.size();
        const int line = d.line;  // d is gone once nodes_ grows
        const Ref* ref = d.ref;
        // A subclass's override: what its self is below it is not known.
        for (auto& o : found)
          if (int n = reach(id, Key{o.mod, o.fn}, line, ref, "via subclass " + o.klass + how); n >= 0)
            fresh.push_back(n);
      }
    }
    return fresh;
  }

  // `if x:` where x's class is not known: the special method of each class the walked
  // code makes that defines it (a probe behind `__bool__`), marked as such on the step.
  std::vector<int> implicit_round() {
    std::vector<int> fresh;
    for (int pass = 0; pass < 2; ++pass) {
      bool waiting = false;
      for (size_t id = 0; id < nodes_.size(); ++id) {
        std::vector<const Ref*> implicits = nodes_[id].implicits;  // nodes_ grows below
        for (const Ref* ref : implicits) {
          std::string dunder = last_name(ref->name);
          for (auto& [cm, ci] : instantiated_) {
            Target t = r_.method(*cm, ci, dunder);
            if (t.kind == Target::pending) waiting = true;
            if (t.kind != Target::function) continue;
            std::string via = "via " + dunder + " of " + cm->name + "." + cm->classes[size_t(ci)].qualified +
                              ", made in the walked code";
            if (int n = reach(id, Key{t.mod, t.index, cm, ci}, ref->line, ref, via); n >= 0) fresh.push_back(n);
          }
        }
      }
      if (!waiting || r_.wanted.empty()) break;
      load_wanted();
    }
    return fresh;
  }

  static std::string last_name(const std::string& dotted) { return dotted.substr(dotted.rfind('.') + 1); }

  // Subclasses in modules nothing the walk read imports (a backend only a plugin
  // module defines) are found by their class statements across the walked packages,
  // then their own subclasses, a few generations deep.
  void find_subclasses() {
    std::set<std::string> packages, names;
    for (const Node& n : nodes_) {
      packages.insert(n.mod->name.substr(0, n.mod->name.find('.')));
      for (const Dispatch& d : n.dispatches) names.insert(last_name(d.mod->classes[size_t(d.cls)].qualified));
    }
    for (int generation = 0; generation < 4 && !names.empty(); ++generation) {
      // One question for every package (a remote host reads them all in one go).
      std::vector<std::string> fresh;
      for (const std::string& n : names)
        for (const std::string& pkg : packages)
          if (searched_.insert(pkg + "\n" + n).second) {
            fresh.push_back(n);
            break;
          }
      if (fresh.empty()) return;
      for (const std::string& m : source_.subclassing({packages.begin(), packages.end()}, fresh))
        if (!r_.modules.count(m)) r_.wanted.insert(m);
      load_wanted();
      std::set<std::string> next;
      for (auto& [name, m] : r_.modules)
        if (m)
          for (const Class& c : m->classes)
            for (const std::string& b : c.bases)
              if (names.count(last_name(b))) next.insert(last_name(c.qualified));
      for (const std::string& n : names) next.erase(n);
      names = std::move(next);
    }
  }

  // An abstract method nothing read overrides is a call not followed, never a resolved
  // one; so are the overrides past the bound.
  void unfollowed_dispatches() {
    for (Node& n : nodes_) {
      std::string who = n.mod->name + ":" + n.mod->functions[n.fn].qualified;
      for (const Dispatch& d : n.dispatches) {
        std::string method = d.mod->name + "." + d.mod->classes[size_t(d.cls)].qualified + "." + d.name;
        if (d.abstract && d.found == 0) {
          n.unresolved.push_back(Unresolved{who, n.mod->file, n.mod->root, d.line, d.call,
                                            "abstract method " + method + ": no subclass the walk read overrides it",
                                            false, ""});
          n.unresolved_refs.push_back(d.ref);
        }
        if (d.more > 0) {
          n.unresolved.push_back(Unresolved{who, n.mod->file, n.mod->root, d.line, d.call,
                                            std::to_string(d.more) + " more overrides of " + method +
                                                " not followed (the first " + std::to_string(kMaxOverrides) +
                                                " were)",
                                            true, ""});
          n.unresolved_refs.push_back(d.ref);
        }
      }
    }
  }

  void load_wanted() {
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

  std::pair<const ModuleFacts*, int> entry() {
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

  std::string name_of(const ModuleFacts& m, int fn) const { return m.name + "." + m.functions[fn].qualified; }

  // Flags `name` when a rule matches it and this use performs it.
  bool flag(Node& n, const Ref& ref, const std::string& name) {
    if (name.empty() || !performs(ref, name)) return false;
    if (const Rule* rule = rules_.match(name)) {
      n.flagged.push_back({ref.line, name, *rule, &ref});
      return true;
    }
    return false;
  }

  // A method reached through an instance (`self.m()`, `obj.m()`, `make().m()`): its
  // subclasses' overrides are followed once every class is read (dispatch_round). Not
  // `super().m()` nor `Base.m(self)`, which name the method that runs.
  void note_dispatch(Node& fresh, const Ref& ref, const Target& t) {
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

  // Records what reaching `t` from `ref` means: a call to walk, a flagged operation,
  // or a call that cannot be followed. False when a module must be loaded first.
  bool follow(Node& fresh, const Ref& ref, const Target& t, const std::string& who) {
    auto unresolved = [&](const std::string& why, bool limit = false) {
      // "d.[]" is how facts spell an item of d; users wrote d[k].
      std::string call = ref.name;
      for (size_t at; (at = call.find(".[]")) != std::string::npos;) call.replace(at, 3, "[...]");
      if (util::ends_with(call, ".[getattr]")) call = "getattr(" + call.substr(0, call.size() - 10) + ", ...)";
      fresh.unresolved.push_back(Unresolved{who, fresh.mod->file, fresh.mod->root, ref.line, call, why, limit, ""});
      fresh.unresolved_refs.push_back(&ref);
    };
    switch (t.kind) {
      case Target::pending: return false;
      case Target::function:
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
        if (flag(fresh, ref, t.name) || ref.kind != Ref::call) break;
        if (t.index == detail::kNoModuleFile) fresh.externals.push_back({&ref, t.name});
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
        if (ref.kind == Ref::call)
          unresolved(t.name + " is made at run time by " + t.mod->name + ":__getattr__ (a lazy export)");
        break;
      case Target::unknown:
      case Target::missing:
        if (ref.kind == Ref::call) unresolved(t.name.empty() ? "not defined" : t.name);
        break;
      case Target::module: break;
    }
    return true;
  }

  // Looks up every name the function uses; false when a module must be loaded first
  // (nothing is kept then: the next try starts over).
  bool expand(int id) {
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
      if (ref.implicit) {
        // `if x:` runs x.__bool__ only where x's class defines one: followed when the
        // class is known, else later to the classes the walk makes (implicit_round).
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
      auto uses = flagged_uses(m, n.fn, ref, rules_);
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

  std::vector<Step> path_to(int id) const {
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

  detail::Branches branches() const {
    std::vector<const Function*> fns;
    std::vector<detail::CallEdge> edges;
    for (size_t id = 0; id < nodes_.size(); ++id) {
      fns.push_back(&nodes_[id].mod->functions[size_t(nodes_[id].fn)]);
      for (const Call& c : nodes_[id].calls)
        if (auto it = ids_.find(c.key); it != ids_.end()) edges.push_back({int(id), it->second, c.ref});
    }
    return detail::Branches(std::move(fns), std::move(edges), 0);
  }

  // Where literal arguments cut calls, each function's chain is the shortest one left
  // (breadth first over the calls that may happen).
  void reroute(const detail::Branches& b) {
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

  // Flagged calls, unresolved calls and calls whose guard the callers' literal
  // arguments rule out, as RuledOut; what only they reach is not reported at all.
  void rule_out(CallGraph& g, const detail::Branches& b) {
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

  // A call out of the program into a module the environment does not have would raise
  // (or is a guarded optional import): nothing is known of what it does, so it is
  // counted as not followed, never silently dropped.
  void missing_modules() {
    std::set<std::string> tops;
    for (const Node& n : nodes_)
      for (auto& [ref, name] : n.externals) {
        std::string top = name.substr(0, name.find('.'));
        auto it = r_.modules.find(top);
        if (it == r_.modules.end() || !it->second) tops.insert(top);
      }
    if (tops.empty()) return;
    auto absent = source_.not_installed({tops.begin(), tops.end()});
    std::set<std::string> gone(absent.begin(), absent.end());
    if (gone.empty()) return;
    for (Node& n : nodes_) {
      const Function& F = n.mod->functions[n.fn];
      for (auto& [ref, name] : n.externals) {
        std::string top = name.substr(0, name.find('.'));
        if (!gone.count(top)) continue;
        n.unresolved.push_back(Unresolved{n.mod->name + ":" + F.qualified, n.mod->file, n.mod->root, ref->line,
                                          ref->name, "module " + top + " is not installed", false, top});
        n.unresolved_refs.push_back(ref);
      }
    }
  }

  CallGraph result() {
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

  // Strongly connected components (Tarjan) of the walked graph: each one with more
  // than one function, or a function calling itself, is a cycle.
  std::vector<std::vector<std::string>> cycles() const {
    int count = int(nodes_.size()), index = 0;
    std::vector<int> idx(count, -1), low(count, 0), stack;
    std::vector<bool> on(count, false);
    std::vector<std::vector<int>> found;
    std::function<void(int)> visit = [&](int v) {
      idx[v] = low[v] = index++;
      stack.push_back(v);
      on[v] = true;
      for (auto& c : nodes_[v].calls) {
        auto it = ids_.find(c.key);
        if (it == ids_.end()) continue;
        int w = it->second;
        if (idx[w] < 0) {
          visit(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on[w]) {
          low[v] = std::min(low[v], idx[w]);
        }
      }
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
    for (int v = 0; v < count; ++v)
      if (idx[v] < 0) visit(v);
    std::sort(found.begin(), found.end());
    std::vector<std::vector<std::string>> out;
    for (auto& comp : found) {
      std::vector<std::string> names;
      for (int v : comp) names.push_back(nodes_[v].mod->name + ":" + nodes_[v].mod->functions[nodes_[v].fn].qualified);
      out.push_back(names);
    }
    return out;
  }

  ModuleSource& source_;
  const RuleSet& rules_;
  const WalkOptions& o_;
  Resolver r_;
  std::vector<Node> nodes_;
  std::map<Key, int> ids_;
  std::map<int, std::string> via_;  // node -> how it was reached, when by dispatch
  std::set<std::string> searched_;  // "package\nClass": subclasses looked for there
  std::size_t waves_ = 0;
  std::set<std::pair<const ModuleFacts*, int>> instantiated_;
  std::map<std::pair<const ModuleFacts*, int>, std::map<std::string, Target>> passed_;  // pass_arguments  // classes the walked code makes (or calls methods on)
  std::size_t beyond_ = 0;
};

}  // namespace

CallGraph walk(ModuleSource& source, const RuleSet& rules, const WalkOptions& options) {
  return Walker(source, rules, options).run();
}

}  // namespace sitepatch::audit
