#pragma once
// The value-flow analysis behind `audit`'s walk (src/audit/flow/): what each name,
// attribute, parameter, return and container item can hold, to a fixpoint, demand-driven
// from the entry; a call edge is a call of a value that holds a function. The engine
// gives it modules' text through a ModuleTexts; it returns the same CallGraph the walk
// always has.
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/audit/graph.hpp"
#include "sitepatch/audit/rules.hpp"

namespace sitepatch::audit::flow {

/// One module's source as the environment holds it.
struct ModuleText {
  std::string source;
  std::string file;      // relative to `root`
  std::string root;      // the site folder it is in
  bool is_package = false;
  bool namespace_package = false;  // a folder with no __init__.py: submodules only
  std::string compiled;  // the compiled twin import loads instead ("" when the source runs)
};

class ModuleTexts {
 public:
  virtual ~ModuleTexts() = default;
  /// The module's text, or nullopt where the environment has no Python source for it (the
  /// standard library's modules are asked too: answering them reads the library's code).
  virtual std::optional<ModuleText> text(const std::string& module) = 0;
  /// A hint: these modules' texts are likely asked next; read them in one batch.
  virtual void prefetch(const std::vector<std::string>& /*modules*/) {}
  /// Modules beside `module` (same parent package), for "did you mean".
  virtual std::vector<std::string> siblings(const std::string& /*module*/) { return {}; }
  /// Of the top-level names `tops` (none with source), those the environment does not have
  /// at all: no standard library module, builtin or compiled extension. Empty when unknown.
  virtual std::vector<std::string> not_installed(const std::vector<std::string>& /*tops*/) { return {}; }
  /// Modules of `packages` (top-level names) with a class statement that may name one of
  /// `classes` (last names) as a base: where a plugin's subclass lives. Empty when unknown.
  virtual std::vector<std::string> subclassing(const std::vector<std::string>& /*packages*/,
                                               const std::vector<std::string>& /*classes*/) {
    return {};
  }
};

/// The call graph from `options.module` (its top level, when `options.function` is
/// empty) or `options.module:options.function`. Throws sitepatch::Error naming what is
/// missing when the entry does not exist.
CallGraph walk(ModuleTexts& texts, const RuleSet& rules, const WalkOptions& options);

/// From now on, each module's lowering is kept for the process, by its name and text
/// (lowered_cache.cpp): for a process that walks the same modules again (explain --run,
/// after every run). Off by default: one walk reads each module once.
void keep_lowered(bool on);

}  // namespace sitepatch::audit::flow
