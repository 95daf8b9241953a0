#pragma once
// Private to src/audit: the walk's state (walk.cpp: the walk and its answer;
// walk_rounds.cpp: the rounds after each breadth-first pass: dispatch to overrides,
// implicit special methods, arguments passed, modules not installed).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "audit/branches.hpp"
#include "audit/dispatch.hpp"
#include "audit/resolve.hpp"
#include "sitepatch/audit/graph.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::walking {

using detail::Resolver;
using detail::Target;
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

inline bool ignorable_decorator(const std::string& spelled) {
  return util::starts_with(spelled, "functools.") || spelled == "property" || spelled == "staticmethod" ||
         spelled == "classmethod" || util::starts_with(spelled, "abc.") || util::starts_with(spelled, "typing.");
}

class Walker {
 public:
  Walker(ModuleSource& source, const RuleSet& rules, const WalkOptions& o) : source_(source), rules_(rules), o_(o) {}

  CallGraph run();

 private:
  void walk_from(std::vector<int> level);

  // What a call passes (`load(Path(p))`, `load(root)` where root's class is known) is
  // what the callee's parameter holds, when nothing in the callee says (one level: the
  // first caller that passes one decides).
  void pass_arguments(const Node& caller, const Ref& ref, const Target& callee);

  // Adds node `id`'s call to `key` (unless it has it) and, when the walk has not reached
  // `key` yet, a node for it: its index, else -1.
  int reach(size_t id, const Key& key, int line, const Ref* ref, const std::string& via);

  // New nodes for overrides not yet followed from each dispatch site.
  std::vector<int> dispatch_round();

  // `if x:`, `x and y` where x's class is not known: the __bool__ (or __len__) of each
  // class the walked code makes that defines it (a probe behind a truth test: torch's
  // `... and isa` over a list of VecISA instances), the step marked as such.
  std::vector<int> truth_round();
  // An implicit call (node, ref) and a class the walked code makes whose method it is.
  struct Definer {
    size_t id;
    const Ref* ref;
    const ModuleFacts* cm;
    int ci;
    Target method;
  };
  // Those of the truth tests (`truth`), or of the other special methods.
  std::vector<Definer> definers(bool truth);
  static bool truth_test(const std::string& dunder) { return dunder == "__bool__" || dunder == "__len__"; }

  // The other special methods (`with f():`'s __exit__, `for`'s __iter__) on a value of
  // unknown class: where a class the walked code makes defines it, a call not followed,
  // naming them; walking into each gave chains no run takes (any __exit__ the program has).
  void unfollowed_implicits();

  static std::string last_name(const std::string& dotted) { return dotted.substr(dotted.rfind('.') + 1); }

  // Subclasses in modules nothing the walk read imports (a backend only a plugin
  // module defines) are found by their class statements across the walked packages,
  // then their own subclasses, a few generations deep.
  void find_subclasses();

  // An abstract method nothing read overrides is a call not followed, never a resolved
  // one; so are the overrides past the bound.
  void unfollowed_dispatches();

  void load_wanted();

  std::pair<const ModuleFacts*, int> entry();

  std::string name_of(const ModuleFacts& m, int fn) const { return m.name + "." + m.functions[fn].qualified; }

  // Flags `name` when a rule matches it and this use performs it.
  bool flag(Node& n, const Ref& ref, const std::string& name);

  // A method reached through an instance (`self.m()`, `obj.m()`, `make().m()`): its
  // subclasses' overrides are followed once every class is read (dispatch_round). Not
  // `super().m()` nor `Base.m(self)`, which name the method that runs.
  void note_dispatch(Node& fresh, const Ref& ref, const Target& t);

  // Records what reaching `t` from `ref` means: a call to walk, a flagged operation,
  // or a call that cannot be followed. False when a module must be loaded first.
  bool follow(Node& fresh, const Ref& ref, const Target& t, const std::string& who);

  // Looks up every name the function uses; false when a module must be loaded first
  // (nothing is kept then: the next try starts over).
  bool expand(int id);

  std::vector<Step> path_to(int id) const;

  detail::Branches branches() const;

  // Where literal arguments cut calls, each function's chain is the shortest one left
  // (breadth first over the calls that may happen).
  void reroute(const detail::Branches& b);

  // Flagged calls, unresolved calls and calls whose guard the callers' literal
  // arguments rule out, as RuledOut; what only they reach is not reported at all.
  void rule_out(CallGraph& g, const detail::Branches& b);

  // A call out of the program into a module the environment does not have would raise
  // (or is a guarded optional import): nothing is known of what it does, so it is
  // counted as not followed, never silently dropped.
  void missing_modules();

  CallGraph result();

  // Strongly connected components (Tarjan) of the walked graph: each one with more
  // than one function, or a function calling itself, is a cycle.
  std::vector<std::vector<std::string>> cycles() const;

  ModuleSource& source_;
  const RuleSet& rules_;
  const WalkOptions& o_;
  Resolver r_;
  std::vector<Node> nodes_;
  std::map<Key, int> ids_;
  std::map<int, std::string> via_;  // node -> how it was reached, when by dispatch
  std::set<std::string> searched_;  // "package\nClass": subclasses looked for there
  std::size_t waves_ = 0;
  std::set<std::pair<const ModuleFacts*, int>> instantiated_;  // classes the walked code makes (or calls methods on)
  std::map<std::pair<const ModuleFacts*, int>, std::map<std::string, Target>> passed_;  // pass_arguments
  std::size_t beyond_ = 0;
};

}  // namespace sitepatch::audit::walking
