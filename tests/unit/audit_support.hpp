#pragma once
// Modules held in memory for walk tests (no environment), loaded from text or from a
// package under tests/data/packages; chains printed one line each.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/audit/flow.hpp"
#include "support/fixture.hpp"

namespace auditsupport {

using namespace sitepatch::audit;

// Modules by name, as source text; every prefetch() call is one wave.
struct MemorySource : flow::ModuleTexts {
  std::map<std::string, std::string> files;  // "pkg/__init__.py" -> text
  int waves = 0;

  MemorySource() = default;
  /// Every .py file of tests/data/packages/<dir>.
  explicit MemorySource(const std::string& dir) {
    std::string root = std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/packages/" + dir;
    for (auto& e : std::filesystem::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().extension() == ".py")
        files[std::filesystem::relative(e.path(), root).string()] = testsupport::slurp(e.path().string());
  }

  std::optional<flow::ModuleText> text(const std::string& m) override {
    std::string rel;
    for (char c : m) rel += c == '.' ? '/' : c;
    for (bool package : {true, false}) {
      auto it = files.find(rel + (package ? "/__init__.py" : ".py"));
      if (it != files.end()) return flow::ModuleText{it->second, it->first, "/site", package, false, ""};
    }
    return std::nullopt;
  }
  void prefetch(const std::vector<std::string>&) override { ++waves; }
  std::vector<std::string> siblings(const std::string&) override { return {"pkg.api", "pkg.core"}; }
};

/// The audit's walk (the value-flow analysis) over modules in memory.
inline CallGraph walk(MemorySource& source, const RuleSet& rules, const WalkOptions& options) {
  return flow::walk(source, rules, options);
}

inline RuleSet dynamo() {
  RuleSet r;
  r.add(builtin_rules());
  return r;
}

/// "mod:fn:line > mod:fn:line > operation", one a chain.
inline std::vector<std::string> chains(const CallGraph& g) {
  std::vector<std::string> out;
  for (auto& c : g.chains) {
    std::string s;
    for (auto& st : c.steps) s += st.name() + ":" + std::to_string(st.line) + " > ";
    out.push_back(s + c.operation);
  }
  return out;
}

/// "file:line function call (why)", one an unresolved call.
inline std::vector<std::string> unresolved(const CallGraph& g) {
  std::vector<std::string> out;
  for (auto& u : g.unresolved)
    out.push_back(u.file + ":" + std::to_string(u.line) + " " + u.function + " " + u.call + " (" + u.why + ")" +
                  (u.limit ? " [limit]" : ""));
  return out;
}

}  // namespace auditsupport
