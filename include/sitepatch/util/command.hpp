#pragma once
// A user's command run as it is: its own argv (looked up in PATH, no shell) and an
// environment changed by a few variables.
#include <map>
#include <string>
#include <vector>

#include "sitepatch/util/process.hpp"

namespace sitepatch::util {

/// This process's environment with `set` applied (a value replaces; nothing removed).
std::vector<std::string> environment_with(const std::map<std::string, std::string>& set);

/// Runs argv on this terminal (stdin, stdout and stderr passed through) until it exits;
/// returns its exit status, 128+signal when a signal ended it. While it runs, SIGINT
/// and SIGQUIT reach it (the terminal sends them to both) and this process waits for it.
/// Throws sitepatch::Error when argv[0] cannot be run.
int run_attached(const std::vector<std::string>& argv, const std::vector<std::string>& env);

/// Runs argv with stdin closed, collecting stdout and stderr apart.
RunResult run_captured(const std::vector<std::string>& argv, const std::vector<std::string>& env);

}  // namespace sitepatch::util
