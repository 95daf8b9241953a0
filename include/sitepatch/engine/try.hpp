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

}  // namespace sitepatch::engine
