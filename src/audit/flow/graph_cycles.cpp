// Cycles of a call graph: Tarjan's strongly connected components, with a stack of its own
// (a call chain of 200,000 functions overflows a thread's stack when this recurses).
#include <algorithm>
#include <map>

#include "audit/flow/graph.hpp"

namespace sitepatch::audit::flow {

std::vector<std::vector<std::string>> cycles_of(const CallGraph& g) {
  std::map<std::string, int> id;
  for (auto& w : g.walked) id.emplace(w.function, int(id.size()));
  int count = int(id.size());
  std::vector<std::vector<int>> calls(size_t(count), std::vector<int>{});
  std::vector<bool> self(size_t(count), false);
  for (auto& e : g.edges) {
    auto a = id.find(e.from), b = id.find(e.to);
    if (a == id.end() || b == id.end()) continue;
    calls[size_t(a->second)].push_back(b->second);
    if (a->second == b->second) self[size_t(a->second)] = true;
  }
  int index = 0;
  std::vector<int> idx(size_t(count), -1), low(size_t(count), 0), stack;
  std::vector<bool> on(size_t(count), false);
  std::vector<std::vector<int>> found;
  std::vector<std::pair<int, size_t>> work;  // a function, and how many of its calls were looked at
  auto enter = [&](int v) {
    idx[size_t(v)] = low[size_t(v)] = index++;
    stack.push_back(v);
    on[size_t(v)] = true;
    work.push_back({v, 0});
  };
  auto finish = [&](int v) {
    if (low[size_t(v)] != idx[size_t(v)]) return;
    std::vector<int> comp;
    int w;
    do {
      w = stack.back();
      stack.pop_back();
      on[size_t(w)] = false;
      comp.push_back(w);
    } while (w != v);
    if (comp.size() > 1 || self[size_t(v)]) {
      std::sort(comp.begin(), comp.end());
      found.push_back(comp);
    }
  };
  for (int root = 0; root < count; ++root) {
    if (idx[size_t(root)] >= 0) continue;
    enter(root);
    while (!work.empty()) {
      auto& [v, k] = work.back();
      if (k < calls[size_t(v)].size()) {
        int w = calls[size_t(v)][k++];
        if (idx[size_t(w)] < 0) enter(w);  // its low reaches v's when it is done, below
        else if (on[size_t(w)]) low[size_t(v)] = std::min(low[size_t(v)], idx[size_t(w)]);
        continue;
      }
      int done = v;
      work.pop_back();
      finish(done);
      if (!work.empty()) low[size_t(work.back().first)] = std::min(low[size_t(work.back().first)], low[size_t(done)]);
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> names(static_cast<size_t>(count));
  for (auto& [n, k] : id) names[size_t(k)] = n;
  std::vector<std::vector<std::string>> out;
  for (auto& comp : found) {
    std::vector<std::string> c;
    for (int v : comp) c.push_back(names[size_t(v)]);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace sitepatch::audit::flow
