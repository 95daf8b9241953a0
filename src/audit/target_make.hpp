#pragma once
// Small helpers the resolver's files share: making a Target, the depth bound.
#include <string>
#include <vector>

#include "audit/resolve.hpp"

namespace sitepatch::audit::detail {

constexpr int kMaxDepth = 24;
// Functions of a module followed from one `getattr(module, name)()`.
constexpr size_t kMaxAttributes = 16;

inline Target make(Target::Kind k, std::string name = "") {
  Target t;
  t.kind = k;
  t.name = std::move(name);
  return t;
}

inline Target make(Target::Kind k, const ModuleFacts* m, int index) {
  Target t;
  t.kind = k;
  t.mod = m;
  t.index = index;
  return t;
}

inline std::string tail_of(const std::vector<std::string>& parts, size_t from) {
  std::string s;
  for (size_t i = from; i < parts.size(); ++i) s += "." + parts[i];
  return s;
}

}  // namespace sitepatch::audit::detail
