#pragma once
// The C++ side of the agent protocol (src/host/agent/, joined): one child process that runs
// the agent, one JSON line per request and per reply. LocalHost uses it for probe and
// compile; a remote host can run the same agent through ssh and use every operation.
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sitepatch/host/host.hpp"

namespace sitepatch::util { class Process; }

namespace sitepatch::host {

/// argv that runs the embedded agent with `python`: `<python> -u -c <agent source>`.
std::vector<std::string> agent_argv(const std::string& python);

class AgentClient {
 public:
  /// Starts `argv` (it must run the agent). `who` names it in messages
  /// ("/venv/bin/python3"). Throws sitepatch::Error if it cannot be started.
  AgentClient(const std::vector<std::string>& argv, std::string who);
  /// What the agent's end means to a user: `fn(exit status, its stderr)`, "" for the
  /// generic message.
  using Explain = std::function<std::string(int, const std::string&)>;
  /// The same, then writes `preamble` to its stdin first (a remote bootstrap reads
  /// the venv path and the agent's source from there); `explain` already answers for
  /// a child that dies before reading it (an ssh command that cannot run).
  AgentClient(const std::vector<std::string>& argv, std::string who, const std::string& preamble,
              Explain explain = {});
  ~AgentClient();
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  /// Protocol check and the environment's facts.
  site::Environment hello();
  std::vector<CompileResult> compile(const std::vector<CompileRequest>& sources);
  std::vector<bool> importable(const std::vector<std::string>& modules);
  /// Host::run_command there; the output comes back whole (never passed through).
  CommandResult run_command(const CommandRun& run);
  /// Host::run_commands there: the far side runs them, `jobs` at once, in one request.
  std::vector<CommandResult> run_commands(const std::vector<CommandRun>& runs, int jobs);
  std::vector<FileData> read(const std::vector<std::string>& paths);
  /// Host::read_lines, filtered on the far side.
  std::vector<FileData> read_lines(const std::vector<std::string>& paths, const std::vector<std::string>& needles);
  std::vector<DirEntry> list(const std::string& dir);
  std::vector<FileStat> stat(const std::vector<std::string>& paths);
  /// Host::search, answered on the far side.
  std::vector<std::vector<EntryHit>> search(const std::vector<EntryQuery>& queries);
  std::vector<std::vector<DirEntry>> list_many(const std::vector<std::string>& dirs);
  std::optional<std::map<std::string, std::string>> snapshot(const std::string& dir,
                                                             const std::vector<std::string>& skip,
                                                             const std::map<std::string, std::string>& have);
  std::vector<std::optional<std::string>> realpath(const std::vector<std::string>& paths);
  void write(const std::vector<WriteRequest>& files);
  void remove(const std::vector<std::string>& paths);
  /// The agent holds the lock until the returned Lock is destroyed (or the agent
  /// exits). The Lock must not outlive this client. The request is posted, not waited
  /// for: a lock that could not be taken is thrown by the next call, and by every call
  /// after it, and a write or remove is never sent before the lock is confirmed.
  std::unique_ptr<Lock> lock(const std::string& path, int timeout_ms, LockMode mode);

  /// One round trip. Throws sitepatch::Error with the agent's message when the reply
  /// says ok=false, and with the child's stderr when it stopped answering. The replies
  /// of posted requests are read first, in the same wait.
  nlohmann::json call(const nlohmann::json& request);

  /// Sends `request` without waiting for its reply (the agent answers in order; the
  /// next call reads it). `checked`: its failure fails every later call (a lock);
  /// otherwise the failure is dropped (an unlock: the agent's exit releases it anyway).
  void post(const nlohmann::json& request, bool checked);
  /// Host::prefetch: a read, a list_many and a realpath posted now; their answers are
  /// kept when they come, for the next read, list_many or realpath of each (once).
  void prefetch(const ReadAhead& what);

  /// Reads the posted answers now if a lock's is among them (one wait) and throws a
  /// refusal; a pending unlock alone costs nothing.
  void confirm();

  /// When the agent stops, `fn(exit status, its stderr)` may give the message users
  /// read instead of the generic one ("" keeps the generic one).
  void explain(std::function<std::string(int, const std::string&)> fn) { explain_ = std::move(fn); }

  /// EOF to the agent: it exits, and ssh closes, while this process goes on.
  void finish();

  /// Requests answered so far.
  int round_trips() const { return round_trips_; }

 private:
  // A posted read or list_many is kept for later (prefetch); `keys` are its paths.
  enum class Ahead { none, read, list, real };
  struct Posted {
    std::string op;
    bool checked;
    size_t sent_bytes;
    std::chrono::steady_clock::time_point sent;
    Ahead ahead = Ahead::none;
    std::vector<std::string> keys;
  };
  void keep(const Posted& p, const nlohmann::json& reply);
  /// Answers `keys` from what was read ahead, asking for the rest in one request.
  template <class T>
  std::vector<T> ahead_or_ask(const std::vector<std::string>& keys, std::map<std::string, T>& kept,
                              std::set<std::string>& pending,
                              const std::function<std::vector<T>(const std::vector<std::string>&)>& ask);
  /// A write or remove of `paths` makes what was read ahead of them, and the listings
  /// of their folders, stale.
  void drop_ahead(const std::vector<std::string>& paths);
  std::vector<FileData> ask_read(const std::vector<std::string>& paths);
  std::vector<std::vector<DirEntry>> ask_list_many(const std::vector<std::string>& dirs);
  std::vector<std::optional<std::string>> ask_realpath(const std::vector<std::string>& paths);
  std::set<std::string>& pending_of(Ahead kind);
  std::map<std::string, FileData> read_ahead_;
  std::map<std::string, std::vector<DirEntry>> listed_ahead_;
  std::map<std::string, std::optional<std::string>> resolved_ahead_;
  std::set<std::string> reading_ahead_, listing_ahead_, resolving_ahead_;  // posted, not answered yet
  site::Environment environment_of(const nlohmann::json& hello);
  std::vector<std::vector<EntryHit>> hits_of(const nlohmann::json& reply, const std::vector<EntryQuery>& queries);
  static std::vector<FileData> files_of(const nlohmann::json& reply, const char* key = "files");
  static std::vector<std::vector<DirEntry>> lists_of(const nlohmann::json& reply);
  static std::vector<std::optional<std::string>> paths_of(const nlohmann::json& reply);
  [[noreturn]] void died(const std::string& what);
  /// The far side sent what no agent sends (a reply too long, not JSON): every later
  /// call fails the same way, since the replies after it cannot be matched to requests.
  [[noreturn]] void broke(const std::string& what);
  /// `read()`'s result, where `read` takes `op`'s reply apart: a reply of another shape
  /// (a key missing, a string for a number, bytes that are not base64) is an error
  /// naming the host, never the JSON library's.
  template <class F>
  auto shaped(const char* op, F&& read) -> decltype(read());
  size_t send(const nlohmann::json& request);
  nlohmann::json receive(const Posted& p);
  /// Reads every posted reply; a checked one's failure becomes failed_.
  void drain();
  std::deque<Posted> posted_;
  std::exception_ptr failed_;  // a posted lock that was refused
  std::exception_ptr broken_;  // broke(): the protocol is lost
  std::unique_ptr<util::Process> proc_;
  std::string who_;
  // Silence bounds the wait, not length: the first reply (hello) must come within
  // `quiet_` of the start, whatever is printed before it; after that, each reply or
  // heartbeat (agent/main.py beats while an operation runs) must come within `quiet_` of
  // the last. SITEPATCH_REPLY_TIMEOUT (seconds) replaces the 45 s.
  std::chrono::steady_clock::duration quiet_;
  std::chrono::steady_clock::time_point heard_;  // the start, then the last reply or beat
  bool answered_ = false;
  /// Arms proc_'s deadline for the next wait; timed_out() says what passed.
  void arm();
  [[noreturn]] void timed_out(const std::string& waiting_for);
  std::string stray_;  // lines printed before the first reply (e.g. by a .pth file), the first kept
  size_t stray_dropped_ = 0;  // bytes of them beyond what stray_ keeps
  const std::string tag_;  // begins the name of every temp the agent makes (host.hpp, Lock)
  std::vector<std::string> unfinished_;  // the lock's answer: tags of writers that never released it
  friend class AgentLock;
  int round_trips_ = 0;
  std::function<std::string(int, const std::string&)> explain_;
};

/// The exact message both hosts give when a compare-and-swap write finds other bytes.
std::string changed_since_read(const std::string& path, const std::string& expected,
                               const std::string& found);
/// The exact message both hosts give when a lock is held too long by someone else.
std::string lock_held(const std::string& path);

}  // namespace sitepatch::host
