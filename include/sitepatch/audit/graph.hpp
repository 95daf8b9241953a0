#pragma once
// The call graph from one entry across an environment's modules, and the chains from it
// to flagged operations: what the value-flow analysis (flow.hpp) answers.
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/audit/rules.hpp"

namespace sitepatch::audit {

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
  std::string rule;       // the rule's id when `call` is a flagged operation, "" for a function
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
  std::vector<Chain> chains;            // shortest first, then in the order of the code
  std::vector<Unresolved> unresolved;   // in walk order; calls into modules not installed among them
  std::vector<std::string> not_installed;  // modules calls go into that the environment lacks, sorted
  std::vector<std::vector<std::string>> cycles;  // each: functions of one cycle, in walk order
  std::vector<Walked> walked;           // every function walked, in walk order
  std::vector<Edge> edges;              // every call followed, in walk order
  std::size_t functions = 0;            // functions walked
  std::size_t modules = 0;              // modules read
  std::size_t waves = 0;                // batches of module texts read
  std::size_t beyond_depth = 0;         // calls not followed because of --depth
  std::vector<RuledOut> ruled_out;      // in walk order
};

struct WalkOptions {
  std::string module;    // entry
  std::string function;  // entry, qualified
  int depth = 0;         // longest chain, in calls (0: no limit)
  int line = 0;          // where `function` is defined more than once (a def in each arm of an
                         // `if`): the one holding this line (a traceback's); 0: the one bound
};

}  // namespace sitepatch::audit
