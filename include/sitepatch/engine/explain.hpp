#pragma once
// explain: a dynamo log's breaks mapped onto the environment's code. Each library
// frame is found by its path below site-packages and checked against the function
// its line holds now; the library entry is walked as `audit` walks it; a fix is
// proposed per break (a hint's traceable body, else torch.compiler.disable on the
// entry) and the walk's other chains are sorted by what that fix leaves.
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/audit/graph.hpp"
#include "sitepatch/engine/engine.hpp"
#include "sitepatch/explain/hints.hpp"
#include "sitepatch/explain/log.hpp"
#include "sitepatch/explain/stack.hpp"

namespace sitepatch::engine {

/// A break as read, with the log it came from.
struct LoggedBreak {
  explain::Break brk;
  std::string log;  // the file name as given ("-" for stdin)
};

/// One frame of the log, placed in the environment.
struct PlacedFrame {
  explain::Frame frame;
  explain::FrameKind kind = explain::FrameKind::user;
  std::string rel;        // below site-packages (library and torch frames)
  std::string site_dir;   // where `rel` is here; "" when not found
  std::string module;     // dotted (library: from rel; stdlib: from its path)
  std::string qualified;  // the function its line is in now, "" at module level or when not mapped
  std::string what;       // "function", "method", "property", "nested function", "module level"
  int def_line = 0;       // its `def` line now
  std::string dist, version;  // the distribution owning the file, "" when none
  bool mapped = false;    // checked against the file here: the log's function at the log's line
  bool stale = false;     // the file here no longer holds the log's function (or code) at that line
  std::string problem;    // why not mapped, or how it is stale
  std::string compiled;   // the compiled twin Python imports instead of `rel` here ("" when none)
  std::string name() const { return module + ":" + qualified; }
};

/// A proposed edit, as a recipe writes it.
struct Fix {
  std::string module, function;  // target
  std::string action;            // "add-decorator" or "replace-body"
  std::string code;              // the decorator, or the body
  std::string position;          // add-decorator's, when not the default (outermost): "innermost"
  int occurrence = 0;            // which definition of `function` (1-based) where the module has several
  bool is_class = false;         // `function` names a class (an insert-after's target)
  std::string ensure_import;
  std::string hint;              // the hint that proposed it, "" for the default
  std::string why;               // what it does
  std::string cost;              // what it costs
  std::string dist, version;
  std::vector<size_t> breaks;    // which breaks (indexes) it answers
  std::vector<std::string> ahead;  // chains from the user's code it answers before the log shows
                                   // them ("os.path.exists at fakeinfer/jit/cpp_ext.py:36")
  std::string name() const { return module + ":" + function; }
};

/// A chain of the walk from a library function, and what the proposed fixes leave of it.
struct FollowUp {
  audit::Chain chain;
  enum State { logged, removed, disabled, remains } state = remains;
  std::string by;  // the fix's target that removes or hides it
  std::string by_code;  // that fix's decorator (add-decorator) or action: how it hides the chain
};

/// One walk from a library function of a break's stack.
struct BreakWalk {
  std::string from;         // module:qualified
  audit::CallGraph graph;
  std::vector<FollowUp> chains;
};

struct ExplainedBreak {
  LoggedBreak logged;
  std::vector<PlacedFrame> frames;  // as the log lists them
  int user_frame = -1;              // the user's frame that called the library (-1: none)
  int entry = -1;                   // the library's entry frame (-1: not inside a library)
  int last = -1;                    // the last library frame
  std::string means;                // what the operation is (a hint), "" when no hint says
  std::string through;              // the call the last library frame makes ("subprocess.check_output")
  std::optional<audit::Rule> rule;  // the audit rule flagging it, when audit finds the chain
  std::string unreached;            // where audit's walk lost the log's path, "" when it did not
  std::optional<size_t> fix;        // index into Explanation::fixes
  std::string no_fix;               // why none
  std::vector<BreakWalk> walks;     // from the entry, then from frames the entry's walk did not reach
  bool in_library() const { return entry >= 0; }
  bool stale() const;
};

/// A walk from the user's own function that entered the library, when its file is
/// readable where the environment is: every chain from the user's code, so the breaks
/// the log does not show yet (the next error after the restart) are found too.
struct UserWalk {
  PlacedFrame frame;           // the user's frame (its module is the file's stem)
  std::vector<size_t> breaks;  // the breaks entering the library from this function
  std::string problem;         // why it was not walked ("" when it was)
  BreakWalk walk;              // chains marked as for a break; `by` of a logged one: its break's index
  std::size_t through_torch = 0;  // chains into torch's own functions, left out (dynamo traces them its way)
};

struct Explanation {
  std::vector<ExplainedBreak> breaks;
  std::vector<Fix> fixes;           // in the order the breaks need them
  std::vector<UserWalk> user_walks;  // one per user function, in the order of the breaks
  bool user_code_walked = false;     // user_walks made (explain --run leaves them out of its later runs)
  bool no_torch = false;             // torch is not importable: no fix proposed
};

/// Places every break's frames in the environment and proposes the fixes; with
/// `user_code`, walks from the user's functions too (walk_from_user_code).
Explanation explain(Session& s, std::vector<LoggedBreak> breaks, const audit::RuleSet& rules,
                    const explain::HintSet& hints, bool user_code = true);

/// The walks from the user's functions of `e`'s breaks, and the fixes they find ahead of
/// the log: what explain() does last, for an explanation made without them.
void walk_from_user_code(Session& s, const audit::RuleSet& rules, Explanation& e);

/// The recipe edit the fix `f` proposes.
recipe::Edit fix_edit(const Fix& f);

/// One edit of a recipe, as `edits:` lists it ("  - module: ..."), for the fix `f`.
std::string edit_yaml(const Fix& f);

/// The break's frames placed without an environment (paths only): what a log says
/// when no break is inside a library.
std::vector<PlacedFrame> place_by_path(const explain::Break& b);

}  // namespace sitepatch::engine
