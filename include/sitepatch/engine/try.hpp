#pragma once
// sitepatch try: a command run with recipes in effect and nothing written.
#include <map>
#include <string>
#include <vector>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine {

/// What `argv` needs to run with the planned files in effect for every Python process
/// it starts: a private folder first on PYTHONPATH whose sitecustomize (try_hook.py)
/// loads each planned module from its new text when the file it would load is the one
/// planned against (same path, same bytes), then runs the environment's own
/// sitecustomize. No bytecode is written (PYTHONDONTWRITEBYTECODE).
host::CommandRun try_run(const Plan& p, const std::vector<std::string>& argv);

/// What checking an apply found (apply --check, --check-with).
struct CheckResult {
  bool ok = true;
  std::string what;  // "importing the patched modules", "`./smoke.sh`"
  host::CommandResult run;
};

/// After an apply of `p`: imports every module it changed, in a fresh process of the
/// environment's Python, when `command` is empty; otherwise runs `command` through
/// `sh -c` with the environment's bin folder first on PATH and VIRTUAL_ENV set. Output
/// is collected.
CheckResult check_applied(Session& s, const Plan& p, const std::string& command);

}  // namespace sitepatch::engine
