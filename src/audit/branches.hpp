#pragma once
// Private to src/audit: which branches the walked calls' literal arguments rule out.
// `load(need_lock=False)` reaching `lock = FileLock(p) if need_lock else nullcontext()`
// never makes the FileLock; when every call reaching a function agrees, what only runs
// in the other arm is left out of the answer (and said to be).
#include <string>
#include <vector>

#include "sitepatch/audit/facts.hpp"

namespace sitepatch::audit::detail {

struct CallEdge {
  int from = -1, to = -1;  // nodes of the walk
  const Ref* ref = nullptr;  // the call in `from` (its guard and literal arguments)
};

class Branches {
 public:
  /// `fns[k]`: the function node k is; node `entry` is called by the user, with any
  /// arguments. Edges whose guard the caller's known arguments rule out are dropped,
  /// and what only they reach, until nothing changes.
  Branches(std::vector<const Function*> fns, std::vector<CallEdge> edges, int entry);

  bool live(int node) const { return live_[size_t(node)]; }
  bool live_edge(size_t e) const { return edge_live_[e]; }
  const std::vector<CallEdge>& edges() const { return edges_; }
  /// Why code of `node` under `guard` never runs ("runs only if need_lock; every call
  /// passes need_lock=False"), or "" when it may.
  std::string ruled_out(int node, const std::string& guard) const;
  bool any_ruled_out() const { return pruned_; }

 private:
  /// What every live call into `node` passes for `param`: 'T', 'F', 'N', or 0 (not
  /// known, or not the same).
  char known(int node, const std::string& param) const;
  std::vector<const Function*> fns_;
  std::vector<CallEdge> edges_;
  std::vector<std::vector<size_t>> in_;  // edges into each node
  std::vector<bool> live_, edge_live_;
  int entry_;
  bool pruned_ = false;
};

/// What call `call` passes for parameter `param` of `callee`: 'T', 'F', 'N' (True,
/// False, None, written or its default), or 0 when not known.
char passed(const Ref& call, const Function& callee, const std::string& param);

}  // namespace sitepatch::audit::detail
