// Direct flagged calls of one module, resolved through its own imports only: the
// whole-package view needs no other module, so each file is read and parsed alone.
#include "sitepatch/audit/scan.hpp"

#include <algorithm>

#include "audit/resolve.hpp"

namespace sitepatch::audit {

std::vector<Finding> scan(const ModuleFacts& m, const RuleSet& rules) {
  std::vector<Finding> out;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    const Function& F = m.functions[i];
    for (const Ref& ref : F.refs) {
      if (ref.kind != Ref::call) continue;
      std::string name;
      if (ref.on_result) {
        size_t dot = ref.name.rfind('.');
        std::string head = detail::spelled(m, int(i), ref.name.substr(0, dot));
        if (!head.empty()) name = head + ref.name.substr(dot);
      } else {
        name = detail::spelled(m, int(i), ref.name);
      }
      if (name.empty()) continue;
      if (const Rule* rule = rules.match(name))
        out.push_back(Finding{F.qualified, F.line, ref.line, ref.column, name, ref.name, rule});
    }
  }
  std::sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return out;
}

}  // namespace sitepatch::audit
