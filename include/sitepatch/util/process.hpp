#pragma once
#include <string>
#include <vector>

namespace sitepatch::util {

/// A child process with piped stdin/stdout (stderr captured to a buffer); argv[0]
/// is looked up in PATH. Nothing goes through a shell.
class Process {
 public:
  explicit Process(const std::vector<std::string>& argv);
  ~Process();  // closes stdin, waits (kills after a grace period)
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  /// Writes all of `data` to the child's stdin. Throws sitepatch::Error if it died.
  void write(std::string_view data);
  /// Closes the child's stdin (it sees EOF).
  void close_input();
  /// Reads everything left on stdout until EOF.
  std::string read_all();
  /// Reads one line (without '\n') from the child's stdout; false at EOF.
  bool read_line(std::string& line);
  /// Closes stdin, waits; returns the exit status (128+signal when killed).
  int wait();
  /// What the child printed on stderr so far (after wait(): all of it).
  std::string stderr_text();
  int pid() const { return pid_; }

 private:
  int pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string out_buf_;
  std::string err_buf_;
  bool waited_ = false;
  int status_ = 0;
  void drain_stderr(bool block);
};

/// Runs argv to completion; returns {exit status, stdout, stderr}.
struct RunResult {
  int status;
  std::string out;
  std::string err;
};
RunResult run(const std::vector<std::string>& argv, std::string_view input = {});

}  // namespace sitepatch::util
