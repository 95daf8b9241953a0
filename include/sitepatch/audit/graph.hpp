#pragma once
// The call graph from one entry function across an environment's modules, and the
// chains from it to flagged operations. Pure analysis: modules arrive as facts
// through a ModuleSource (the engine reads them through the Host, in batches).
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/audit/rules.hpp"

namespace sitepatch::audit {

class ModuleSource {
 public:
  virtual ~ModuleSource() = default;
  /// Facts of each dotted module (file set), or nullopt where the environment has no
  /// such module (the standard library, a C extension, a typo). Called once per wave
  /// of the walk with every module that wave needs.
  virtual std::vector<std::optional<ModuleFacts>> load(const std::vector<std::string>& modules) = 0;
  /// Modules beside `module` (same parent package), for "did you mean".
  virtual std::vector<std::string> siblings(const std::string& module) = 0;
  /// Of the top-level module names `tops` (none of which load() found), those the
  /// environment does not have at all: neither the standard library, a builtin, nor a
  /// compiled extension. Empty when that is not known (the default).
  virtual std::vector<std::string> not_installed(const std::vector<std::string>& /*tops*/) { return {}; }
  /// Modules of the top-level `packages` with a class statement that may name one of
  /// `classes` among its bases (`class X(Base):`, `class X(mod.Base, Mixin):`): read as
  /// text, so a superset; the walk reads each and decides. None by default.
  virtual std::vector<std::string> subclassing(const std::vector<std::string>& /*packages*/,
                                               const std::vector<std::string>& /*classes*/) {
    return {};
  }
};

/// One function of a chain; `line` is where it makes the next call of the chain.
struct Step {
  std::string module;
  std::string qualified;  // "Cls.method"; "" never (the top level is never a step)
  std::string file;       // relative to its site-packages
  std::string root;       // that site folder (ModuleFacts::root)
  int line = 0;
  std::string via;        // how the step before reaches it when not by name: "via subclass pkg.mod.NinjaSpec"
  std::string name() const { return module + ":" + qualified; }
};

struct Chain {
  std::vector<Step> steps;  // the entry first; the last one performs the operation
  std::string operation;    // the called name as resolved ("subprocess.run")
  Rule rule;
};

struct Unresolved {
  std::string function;  // module:qualified
  std::string file;
  std::string root;      // the folder `file` is relative to (ModuleFacts::root)
  int line = 0;
  std::string call;      // as written
  std::string why;       // "method of an unknown object", ...
  bool limit = false;    // a limit of this tool (a name resolving in a circle), not of the code
  std::string missing;   // the module not installed the call goes into ("" otherwise)
};

/// A flagged call (or one not followed) left out because the literal arguments of every
/// call reaching its function rule its branch out (`need_lock=False` and `if need_lock:`).
struct RuledOut {
  std::string function;   // module:qualified
  std::string file;
  std::string root;
  int line = 0;
  std::string call;       // the operation, or the call as written
  std::string why;        // "runs only if need_lock; every call passes need_lock=False"
};

/// A function the walk reached (and read every call of).
struct Walked {
  std::string function;  // module:qualified
  std::string file;
  int line = 0, end_line = 0;
};

/// A call the walk followed from one walked function to another.
struct Edge {
  std::string from, to;  // module:qualified
  int line = 0;          // where `from` makes the call
  std::string via;       // "via subclass pkg.mod.Cls" when dispatch reaches it
};

struct CallGraph {
  std::vector<Chain> chains;            // shortest first, then by text
  std::vector<Unresolved> unresolved;   // in walk order; calls into modules not installed among them
  std::vector<std::string> not_installed;  // modules calls go into that the environment lacks, sorted
  std::vector<std::vector<std::string>> cycles;  // each: functions of one cycle, in walk order
  std::vector<Walked> walked;           // every function walked, in walk order
  std::vector<Edge> edges;              // every call followed, in walk order
  std::size_t functions = 0;            // functions walked
  std::size_t modules = 0;              // modules read
  std::size_t waves = 0;                // batches asked of the ModuleSource
  std::size_t beyond_depth = 0;         // calls not followed because of --depth
  std::vector<RuledOut> ruled_out;      // in walk order
};

struct WalkOptions {
  std::string module;    // entry
  std::string function;  // entry, qualified
  int depth = 0;         // longest chain, in calls (0: no limit)
};

/// Walks every function reachable from the entry (each once, cycles included), one
/// shortest chain per flagged call site. Throws sitepatch::Error naming what is
/// missing when the entry module or function does not exist.
CallGraph walk(ModuleSource& source, const RuleSet& rules, const WalkOptions& options);

}  // namespace sitepatch::audit
