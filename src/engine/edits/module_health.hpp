#pragma once
// What verify's health check (module_health.cpp) and plan share: the names an edit left
// unbound, and the key under which apply records that a file's bytes passed the check.
#include <string>
#include <vector>

#include "sitepatch/python/module.hpp"
#include "sitepatch/site/environment.hpp"

namespace sitepatch::engine::detail {

/// Names free in `now` that were not free in `before`: what a patch uses and nothing
/// binds any more. Empty when either module's names cannot be known.
std::vector<std::string> lost_names(const python::Module& before, const python::Module& now,
                                    const std::vector<std::string>& builtins);

/// FileRecord::checked for `text` under this environment's Python: its sha256, the
/// interpreter and its version (a file compiles or not by the Python that reads it).
std::string health_key(const std::string& text, const site::Environment& env);

}  // namespace sitepatch::engine::detail
