#include "audit/dispatch.hpp"

#include <set>

namespace sitepatch::audit::detail {

void SubclassIndex::build(Resolver& r) {
  subs_.clear();
  for (auto& [name, m] : r.modules) {
    if (!m) continue;
    for (size_t k = 0; k < m->classes.size(); ++k) {
      const Class& c = m->classes[k];
      for (const std::string& base : c.bases) {
        Target t = r.in_scope(*m, c.scope, base);
        if (t.kind == Target::klass) subs_[{t.mod, t.index}].push_back({&*m, int(k)});
      }
    }
  }
}

bool SubclassIndex::made(const ModuleFacts& m, int cls, const std::set<std::pair<const ModuleFacts*, int>>& made) const {
  std::set<std::pair<const ModuleFacts*, int>> seen;
  std::vector<std::pair<const ModuleFacts*, int>> todo = {{&m, cls}};
  while (!todo.empty()) {
    auto c = todo.back();
    todo.pop_back();
    if (!seen.insert(c).second) continue;
    if (made.count(c)) return true;
    if (auto it = subs_.find(c); it != subs_.end()) todo.insert(todo.end(), it->second.begin(), it->second.end());
  }
  return false;
}

std::vector<Override> SubclassIndex::overrides(const ModuleFacts& m, int cls, const std::string& name) const {
  std::vector<Override> out;
  std::set<std::pair<const ModuleFacts*, int>> seen{{&m, cls}};
  std::vector<std::pair<const ModuleFacts*, int>> wave = {{&m, cls}};
  while (!wave.empty()) {
    std::vector<std::pair<const ModuleFacts*, int>> next;
    for (auto& c : wave) {
      auto it = subs_.find(c);
      if (it == subs_.end()) continue;
      for (auto& sub : it->second) {
        if (!seen.insert(sub).second) continue;
        const Class& k = sub.first->classes[size_t(sub.second)];
        if (auto f = k.methods.find(name); f != k.methods.end())
          out.push_back({sub.first, f->second, sub.first->name + "." + k.qualified});
        next.push_back(sub);
      }
    }
    wave = std::move(next);
  }
  return out;
}

}  // namespace sitepatch::audit::detail
