#pragma once
#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::util {

/// Runs argv to completion; returns {exit status, stdout, stderr}, each whole (for
/// children whose output is the caller's to hold, not a far side's).
struct RunResult {
  int status;
  std::string out;
  std::string err;
};
RunResult run(const std::vector<std::string>& argv, std::string_view input = {});

/// What write and read_line throw when the deadline set on the Process passes first.
struct Timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A child process with piped stdin/stdout (stderr captured to a buffer); argv[0]
/// is looked up in PATH. Nothing goes through a shell. What the child sends is held
/// within bounds: a child that never ends a line, or floods stderr, cannot grow this
/// process's memory.
class Process {
 public:
  /// The longest line read_line returns unless told otherwise.
  static constexpr size_t kMaxLine = size_t(16) << 20;
  /// stderr kept: its first and its last this many bytes; what lies between is counted.
  static constexpr size_t kStderrKept = size_t(2) << 20;

  explicit Process(const std::vector<std::string>& argv);
  ~Process();  // closes stdin, waits (kills after a grace period)
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  /// Writes all of `data` to the child's stdin (reading its stderr meanwhile, so a
  /// child blocked on a full stderr pipe cannot stall it). Throws sitepatch::Error if
  /// it died.
  void write(std::string_view data);
  /// From now on write and read_line throw Timeout once `when` has passed without what
  /// they wait for (nullopt: they wait as long as it takes). What arrives on stderr
  /// meanwhile is kept, and does not move the deadline.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> when) { deadline_ = when; }

  /// Closes the child's stdin (it sees EOF).
  void close_input();
  /// Reads everything left on stdout until EOF (no bound: the caller asked for all).
  std::string read_all();
  /// Writes `input`, then EOF, while reading stdout to EOF (and stderr); returns
  /// stdout. A child that stops reading its input gets no more of it.
  std::string communicate(std::string_view input);
  /// Reads one line (without '\n') from the child's stdout; false at EOF. A line
  /// longer than `max` bytes throws sitepatch::Error ("a line longer than N MB");
  /// its bytes are not kept.
  bool read_line(std::string& line, size_t max = kMaxLine);
  /// Closes stdin, waits; returns the exit status (128+signal when killed).
  int wait();
  /// What the child printed on stderr so far (after wait(): all of it), but for what
  /// lies beyond the first and last kStderrKept bytes: a line says how much was left out.
  std::string stderr_text();
  int pid() const { return pid_; }
  /// Bytes of the child's output held now (stdout read but not returned, stderr
  /// kept): through read_line, never much more than its `max` plus 3 * kStderrKept.
  size_t held() const { return out_buf_.size() + err_buf_.size() + err_tail_.size(); }

 private:
  int pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string out_buf_;
  size_t out_start_ = 0;    // out_buf_ before it was returned already
  size_t out_scanned_ = 0;  // out_buf_ before it holds no '\n': never searched twice
  std::string err_buf_;     // the first kStderrKept bytes
  std::string err_tail_;    // the last bytes after those (trimmed to kStderrKept when read)
  size_t err_dropped_ = 0;  // bytes between the two, not kept
  size_t err_keep_ = kStderrKept;  // run() keeps it all
  bool waited_ = false;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  /// poll's timeout for the deadline (-1: none, 0: it has passed).
  int poll_timeout() const;
  /// Throws Timeout when the deadline has passed.
  void check_deadline() const;
  int status_ = 0;
  void drain_stderr(bool block);
  void keep_stderr(const char* data, size_t n);
  /// Reads once more from stdout into out_buf_ (draining stderr while it waits); false at EOF.
  bool fill();
  friend RunResult run(const std::vector<std::string>& argv, std::string_view input);
};


}  // namespace sitepatch::util
