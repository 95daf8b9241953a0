#pragma once
// Private to explain --run (explain_run.cpp): warm runs (warm_runs.cpp). A command of the
// form `python SCRIPT ARGS` or `python -m MODULE ARGS` runs through a client
// (warm_client.py) that hands it to the session's fork server (warm_server.py), which
// imported torch once; anything else runs cold, as sh -c runs it.
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/host/host.hpp"

namespace sitepatch::engine::detail {

/// The words of `command` as sh would split them, quotes and backslashes taken off;
/// nullopt where sh would do more than split it (an expansion, a redirection, an
/// operator, a glob, a comment, a variable assignment).
std::optional<std::vector<std::string>> plain_words(const std::string& command);
/// The same, saying in `why` what sh would do more with.
std::optional<std::vector<std::string>> plain_words(const std::string& command, std::string* why);

/// Why `command` cannot run warm, in words; "" when it can (its words then in `words`).
std::string cold_because(const std::string& command, std::vector<std::string>* words = nullptr);

/// The first line a warm-capable run writes on stderr ("sitepatch-run: warm", or
/// "sitepatch-run: cold: WHY"), taken out of `err`; what it says ("warm", "cold: WHY"),
/// or "" when there is none.
std::string take_start_line(std::string& err);

/// One explain session's warm runs: the server is started by the first run, on the host,
/// and stopped (through the host) when this goes.
class WarmRuns {
 public:
  /// Warm when `command` allows it and `cold` (--cold) is not asked.
  WarmRuns(host::Host& h, const site::Environment& env, const std::string& command, bool cold);
  ~WarmRuns();
  WarmRuns(const WarmRuns&) = delete;
  WarmRuns& operator=(const WarmRuns&) = delete;

  /// "" when runs start warm; else why they start cold.
  const std::string& cold() const { return cold_; }
  /// Turns a cold run of the command (try_run's) into the warm client's.
  void warm(host::CommandRun& run);

 private:
  host::Host& h_;
  std::string python_;  // the environment's interpreter, for the last command (stop)
  std::string session_;
  std::vector<std::string> words_;
  std::string cold_;
  bool used_ = false;
};

}  // namespace sitepatch::engine::detail
