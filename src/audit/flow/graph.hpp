#pragma once
// Inside flow's walk (graph.cpp, graph_entry.cpp): modules lowered from their text on
// demand, and the entry the solver starts from.
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "audit/flow/solver.hpp"
#include "sitepatch/audit/flow.hpp"

namespace sitepatch::audit::flow {

class Lowering : public Source {
 public:
  explicit Lowering(ModuleTexts& texts) : texts_(texts) {}
  std::optional<Module> load(const std::string& name) override;
  bool compiled(const std::string& name) const override { return compiled_.count(name) > 0; }
  std::vector<std::string> subclassing(const std::vector<std::string>& packages,
                                       const std::vector<std::string>& classes) override {
    return texts_.subclassing(packages, classes);
  }
  /// A compiled module's twin (what import loads) and the source it shadows.
  const std::pair<std::string, std::string>* twin(const std::string& name) const {
    auto it = compiled_.find(name);
    return it == compiled_.end() ? nullptr : &it->second;
  }

 private:
  ModuleTexts& texts_;
  std::map<std::string, std::pair<std::string, std::string>> compiled_;
};

/// Has the solver reach the entry `options` names; returns where it was entered (a
/// re-exported function's own module and name). Throws sitepatch::Error naming what is
/// missing, with the nearest names.
WalkOptions enter(Solver& solver, ModuleTexts& texts, const WalkOptions& options);

}  // namespace sitepatch::audit::flow

namespace sitepatch::audit::flow {

/// The call graph's cycles: each strongly connected set of walked functions (or one that
/// calls itself), its functions in walk order; the cycles in order of their first function.
std::vector<std::vector<std::string>> cycles_of(const CallGraph& g);

}  // namespace sitepatch::audit::flow
