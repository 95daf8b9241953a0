#pragma once
// A script run once in the environment's own Python, its answer one JSON line: how
// explain --run checks hints and rules --calibrate asks torch.
#include <string>

#include <nlohmann/json.hpp>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine::detail {

/// Runs `script` (`python -I -B -c script arg`: the caller's folder and PYTHONPATH off
/// sys.path, no __pycache__ written into the environment) and parses what follows `mark`
/// on the last line that holds it; null when no such line parses. `raw` gets the run.
nlohmann::json python_answer(Session& s, const char* script, const std::string& arg, const std::string& mark,
                             host::CommandResult* raw = nullptr);

}  // namespace sitepatch::engine::detail
