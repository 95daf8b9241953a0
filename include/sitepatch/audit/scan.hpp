#pragma once
// The whole-package view: every call in a module whose name, resolved through that
// module's imports, matches a rule. A call belongs to its innermost enclosing
// function; a call at module level (or in a class body) belongs to none and is
// reported with an empty function (it runs at import time, not when a function runs).
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/audit/prefilter.hpp"
#include "sitepatch/audit/rules.hpp"
#include "sitepatch/util/budget.hpp"

namespace sitepatch::audit {

struct Finding {
  std::string function;   // qualified ("Cls.method"); "" at module level
  int function_line = 0;  // its `def` line; 0 at module level
  int line = 0;
  int column = 0;         // 1-based, bytes
  std::string operation;  // the resolved name ("subprocess.Popen")
  std::string written;    // as written at the call ("Popen")
  const Rule* rule = nullptr;
};

/// Whether this use of a name performs what the name stands for: a call or an
/// instantiation (not of an exception being raised), `with`, a decorator, or a name
/// passed on, returned or put in a container (`pool.submit(subprocess.run)`,
/// `map(open, paths)`: it will be called); not a constant (`subprocess.PIPE`), nor
/// `x = name` (that only names it again: a call of x is followed, or counted as not
/// followed). Except clauses, isinstance() and annotations make no Ref at all. Both
/// audit modes flag a name only where this holds.
bool performs(const Ref& ref, std::string_view name);

/// A flagged operation one use of a name performs.
struct Use {
  std::string operation;  // as resolved through the imports ("subprocess.run")
  const Rule* rule = nullptr;
};

/// What `ref` (a use inside function `fn` of `m`) performs that a rule flags, spelled
/// through the module's own imports, each branch of a try/except or if/else import.
std::vector<Use> flagged_uses(const ModuleFacts& m, int fn, const Ref& ref, const RuleSet& rules);

/// Flagged uses of one module, in source order.
std::vector<Finding> scan(const ModuleFacts& m, const RuleSet& rules);

/// What scanning one file's text found, and what it cost.
struct TextScan {
  bool parsed = false;         // the pre-filter kept it
  bool syntax_errors = false;  // a part it parsed has ERROR nodes
  std::size_t bytes_parsed = 0;
  std::vector<Finding> findings;
};

/// scan() of a module's text, parsing only what `filter` says can hold a flagged name:
/// nothing, or its top-level blocks that write a word of a rule (or a name its imports
/// bind to one), each block's tree alone, under `budget` (may be null). The findings
/// are those of parsing the whole file; a block with a syntax error makes it parse
/// the whole file, as before.
TextScan scan_text(std::string_view text, const std::string& module, bool is_package, const RuleSet& rules,
                   const Prefilter& filter, util::ByteBudget* budget);

}  // namespace sitepatch::audit
