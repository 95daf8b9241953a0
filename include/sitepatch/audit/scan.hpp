#pragma once
// The whole-package view: every call in a module whose name, resolved through that
// module's imports, matches a rule. A call belongs to its innermost enclosing
// function; a call at module level (or in a class body) belongs to none and is
// reported with an empty function (it runs at import time, not when a function runs).
#include <string>
#include <vector>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/audit/rules.hpp"

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

/// Flagged calls of one module, in source order.
std::vector<Finding> scan(const ModuleFacts& m, const RuleSet& rules);

}  // namespace sitepatch::audit
