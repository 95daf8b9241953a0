#pragma once
// A target that moved: the recipe's module only re-exports it (`from .impl import f`,
// `from .impl import *`, an `__init__` that imports it). Follows the imports to the
// module that defines it, within the distribution that owns the recipe's module.
#include <map>
#include <memory>
#include <string>

#include "engine/edits/locate.hpp"
#include "sitepatch/python/module.hpp"

namespace sitepatch::engine::detail {

/// The parsed modules of one plan, by absolute path: no file is parsed twice.
class ModuleCache {
 public:
  const python::Module& get(const Located& l);
  void put(const std::string& path, python::Module m);
  bool has(const std::string& path) const { return modules_.count(path) != 0; }

 private:
  std::map<std::string, std::shared_ptr<const python::Module>> modules_;
};

struct Followed {
  bool moved = false;
  Located where;        // the defining module's file (when moved)
  std::string module;   // its dotted name
  std::string target;   // the target's qualified name there (`as` renames it)
  std::string note;     // "fp4_quantize is re-exported: a -> b (b.py:12); patching it there"
  std::string problem;  // why an import was not followed (cycle, another distribution)
};

/// Where `e`'s target is defined, starting at `start` (which does not define it).
Followed follow(Session& s, const Located& start, const recipe::Edit& e, ModuleCache& cache);

/// The absolute module a `from` import in `importer` names ("..x" in a.b.c -> a.x).
/// Empty when the dots climb above the top-level package.
std::string resolve_import(const std::string& importer, bool importer_is_package,
                           const std::string& written);

}  // namespace sitepatch::engine::detail
