#pragma once
// Private to src/audit: which classes the walk has read derive from a class, so that
// `self.m()` / `obj.m()` reaches every override of m, not only the base's (an abstract
// `build` on a base runs a subclass's `build`).
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "audit/resolve.hpp"

namespace sitepatch::audit::detail {

struct Override {
  const ModuleFacts* mod = nullptr;
  int fn = -1;          // the overriding method
  std::string klass;    // "pkg.mod.NinjaSpec"
};

class SubclassIndex {
 public:
  /// Every class of every module `r` has loaded, by its bases as `r` resolves them; a
  /// base in a module not loaded yet is loaded (through `load`) when `r` asks for it.
  template <class Load>
  SubclassIndex(Resolver& r, Load load) {
    for (int round = 0; round < 3; ++round) {
      build(r);
      if (r.wanted.empty()) return;
      load();
    }
    build(r);
  }

  /// Methods named `name` that subclasses of class `cls` of `m` define themselves, at
  /// any depth, nearest first; a class defining it hides it from its own subclasses
  /// only for itself (theirs are listed too).
  std::vector<Override> overrides(const ModuleFacts& m, int cls, const std::string& name) const;

  /// Whether class `cls` of `m`, or a subclass of it at any depth, is one of `made`.
  bool made(const ModuleFacts& m, int cls, const std::set<std::pair<const ModuleFacts*, int>>& made) const;

 private:
  void build(Resolver& r);
  std::map<std::pair<const ModuleFacts*, int>, std::vector<std::pair<const ModuleFacts*, int>>> subs_;
};

}  // namespace sitepatch::audit::detail
