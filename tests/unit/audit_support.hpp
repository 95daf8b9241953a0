#pragma once
// Modules held in memory for walk tests (no environment), loaded from text or from a
// package under tests/data/packages; chains printed one line each.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/audit/graph.hpp"
#include "support/fixture.hpp"

namespace auditsupport {

using namespace sitepatch::audit;

// Modules by name, as source text; every load() call is one wave.
struct MemorySource : ModuleSource {
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

  std::vector<std::optional<ModuleFacts>> load(const std::vector<std::string>& modules) override {
    ++waves;
    std::vector<std::optional<ModuleFacts>> out;
    for (auto& m : modules) {
      std::string rel;
      for (char c : m) rel += c == '.' ? '/' : c;
      if (files.count(rel + "/__init__.py")) {
        out.push_back(extract(files[rel + "/__init__.py"], m, true));
        out.back()->file = rel + "/__init__.py";
      } else if (files.count(rel + ".py")) {
        out.push_back(extract(files[rel + ".py"], m, false));
        out.back()->file = rel + ".py";
      } else {
        out.push_back(std::nullopt);
      }
    }
    return out;
  }
  std::vector<std::string> siblings(const std::string&) override { return {"pkg.api", "pkg.core"}; }
};

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
