#include "audit/branches.hpp"

#include <algorithm>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::detail {

namespace {

std::string spelled_value(char v) { return v == 'T' ? "True" : v == 'F' ? "False" : "None"; }

}  // namespace

char passed(const Ref& call, const Function& callee, const std::string& param) {
  // A function handed on as a value, a decorator, a `with`: called with arguments
  // this tool does not see.
  if (call.kind != Ref::call || call.literals.empty()) return 0;
  auto at = std::find(callee.params.begin(), callee.params.end(), param);
  if (at == callee.params.end()) return 0;
  // A method's first parameter is the instance the call is made on.
  long position = long(at - callee.params.begin()) - (callee.self_name.empty() ? 0 : 1);
  bool spread = false;
  for (const std::string& item : util::split(call.literals, ' ')) {
    if (item == "*") spread = true;
    size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string key = item.substr(0, eq);
    if (key == param || (key[0] == '#' && key.substr(1) == std::to_string(position)))
      return item[eq + 1] == '?' ? 0 : item[eq + 1];
  }
  // Not written: its default, unless *args or **kwargs may carry it.
  if (spread) return 0;
  auto d = callee.defaults.find(param);
  return d == callee.defaults.end() ? 0 : d->second;
}

Branches::Branches(std::vector<const Function*> fns, std::vector<CallEdge> edges, int entry)
    : fns_(std::move(fns)), edges_(std::move(edges)), in_(fns_.size()), entry_(entry) {
  for (size_t e = 0; e < edges_.size(); ++e) in_[size_t(edges_[e].to)].push_back(e);
  live_.assign(fns_.size(), true);
  edge_live_.assign(edges_.size(), true);
  // Each pass may make more arguments known (fewer calls left to agree), so more
  // branches ruled out; a few passes reach the end on any real code.
  for (int pass = 0; pass < 6; ++pass) {
    std::vector<bool> edge(edges_.size(), false), node(fns_.size(), false);
    std::vector<std::vector<size_t>> out(fns_.size());
    for (size_t e = 0; e < edges_.size(); ++e) out[size_t(edges_[e].from)].push_back(e);
    std::vector<int> todo = {entry_};
    node[size_t(entry_)] = true;
    while (!todo.empty()) {
      int v = todo.back();
      todo.pop_back();
      for (size_t e : out[size_t(v)]) {
        const Ref* r = edges_[e].ref;
        if (r && !ruled_out(v, r->guard).empty()) continue;
        edge[e] = true;
        int w = edges_[e].to;
        if (!node[size_t(w)]) {
          node[size_t(w)] = true;
          todo.push_back(w);
        }
      }
    }
    if (edge == edge_live_ && node == live_) break;
    edge_live_ = std::move(edge);
    live_ = std::move(node);
    pruned_ = true;
  }
}

char Branches::known(int node, const std::string& param) const {
  if (node == entry_) return 0;
  char agreed = 0;
  bool any = false;
  for (size_t e : in_[size_t(node)]) {
    if (!edge_live_[e] || !live_[size_t(edges_[e].from)]) continue;
    const Ref* r = edges_[e].ref;
    char v = r ? passed(*r, *fns_[size_t(node)], param) : 0;
    if (v == 0 || (any && v != agreed)) return 0;
    agreed = v;
    any = true;
  }
  return agreed;
}

std::string Branches::ruled_out(int node, const std::string& guard) const {
  if (guard.empty()) return "";
  for (const std::string& g : util::split(guard, ' ')) {
    bool want = g[0] != '!';
    std::string param = want ? g : g.substr(1);
    char v = known(node, param);
    if (v == 0 || (v == 'T') == want) continue;
    return "runs only if " + g.substr(want ? 0 : 1).insert(0, want ? "" : "not ") + "; every call passes " +
           param + "=" + spelled_value(v);
  }
  return "";
}

}  // namespace sitepatch::audit::detail
