#pragma once
// One interface in front of the machine that holds the environment. The engine sees
// only this: LocalHost does it with system calls, a later SshHost through an agent.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/site/environment.hpp"
#include "sitepatch/util/error.hpp"

namespace sitepatch::host {

struct FileData {
  std::string path;      // absolute, as asked
  bool exists = false;
  bool is_dir = false;
  std::string content;   // bytes (files only)
  unsigned mode = 0;     // permission bits
  unsigned long nlink = 0;
};

/// What stat(2) says of a file, for telling which of many changed without reading them.
struct FileStat {
  std::string path;      // absolute, as asked
  bool exists = false;
  bool is_file = false;  // a regular file (links followed)
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // modification time, nanoseconds since the epoch
};

struct DirEntry {
  std::string name;
  bool is_dir = false;
};

struct WriteRequest {
  std::string path;             // absolute
  std::string content;
  std::string expected_sha256;  // hex of what must be there now; refuses when it differs
  std::string within;           // the file's real folder must be inside this one ("" = anywhere)
};

/// A write that failed part way and could not put back every file it had replaced.
/// `changed` lists the files left with the new bytes; every other file is as it was.
class PartialWriteError : public Error {
 public:
  PartialWriteError(const std::string& message, std::vector<std::string> changed)
      : Error(message, Exit::partial), changed_(std::move(changed)) {}
  const std::vector<std::string>& changed() const { return changed_; }

 private:
  std::vector<std::string> changed_;
};

/// Host::prefetch: what a command will read (paths as it will ask for them).
struct ReadAhead {
  std::vector<std::string> files;      // read
  std::vector<std::string> dirs;       // list_many
  std::vector<std::string> realpaths;  // realpath
};

/// Readers share the lock; writers hold it alone.
enum class LockMode { exclusive, shared };

struct CompileRequest {
  std::string label;   // file name shown in messages
  std::string source;
};

struct CompileResult {
  bool ok = true;
  int line = 0;
  int column = 0;       // 1-based, 0 when Python gave none
  std::string message;  // "invalid syntax (flashinfer/jit/cpp_ext.py, line 12)"
  std::string reason;   // Python's own message alone: "'(' was never closed" ("" if not a SyntaxError)
};

/// A question about the entries of folders, answered where the files are, so that what
/// crosses a connection grows with the answer, not with the folder: a GPU server's
/// site-packages has 200 dist-infos, and the one that owns a file is what is asked.
struct EntryQuery {
  std::vector<std::string> dirs;
  std::vector<std::string> patterns;  // entry names, fnmatch-style, case-insensitive
  /// Files of each entry ("NAME" inside it; "" is the entry itself) searched for
  /// `needles`: an entry is a hit when one of them holds a line with a needle, and
  /// only those lines come back. An empty needle holds every line. No needles at all:
  /// every matching entry is a hit and its lists are only looked up, not read.
  std::vector<std::string> lists;
  std::vector<std::string> needles;
  std::vector<std::string> heads;   // files of each hit read up to their first empty line
  std::vector<std::string> wholes;  // files of each hit read whole
};

struct EntryHit {
  size_t dir = 0;        // index into EntryQuery::dirs
  std::string name;      // the entry's name
  bool is_dir = false;
  std::vector<FileData> lists, heads, wholes;  // one per EntryQuery field, in its order
};

/// fnmatch(3) with FNM_CASEFOLD, the same on every host: `*`, `?`, `[...]`.
bool name_matches(std::string_view pattern, std::string_view name);
/// `text` up to (and with) its first empty line: an email-style file's headers.
std::string_view head_of(std::string_view text);

/// The lines of `text` (each ending in '\n', the last one given one) that hold one of
/// `needles`, in order; what `Host::read_lines` keeps of a file.
std::string lines_holding(std::string_view text, const std::vector<std::string>& needles);

/// A user's command, run on the host with files of its own: written to a private
/// temporary folder (mode 0700) for the run, removed after it.
struct CommandRun {
  std::vector<std::string> argv;             // looked up in PATH, no shell
  std::map<std::string, std::string> files;  // name in the folder -> content
  std::map<std::string, std::string> env;    // set for the command; "{dir}" stands for the folder
  /// Variables (PYTHONPATH) that get the folder first, keeping what they held.
  std::vector<std::string> path_first;
  /// Variables (PATH) that get a given folder first, keeping what they held there.
  std::map<std::string, std::string> path_first_dirs;
  bool capture = false;  // collect stdout and stderr instead of passing them through
  /// A line for stderr once the folder is ready and just before the command starts (what
  /// a refusal of the folder must not be preceded by); empty: nothing.
  std::string announce;
};

struct CommandResult {
  int status = 0;  // the command's exit status, 128+signal when a signal ended it
  std::string out, err;  // with `capture`
  double seconds = 0;    // how long it ran (where it ran)
};

/// Held while a command works; released by the destructor (and by the OS if we die).
/// A writer's lock file names the tag of the temps its host makes (`.<name>.sitepatch-
/// <tag><random>.tmp` and `.orig`) until it is released: a writer killed on the way
/// leaves its tag there, and only temps with such a tag are what it left.
class Lock {
 public:
  virtual ~Lock() = default;
  /// Tags of the writers before this one that did not release the lock (killed): temps
  /// bearing one are theirs. Empty for a reader. Waits for a remote lock's answer.
  virtual std::vector<std::string> unfinished() { return {}; }
};

/// Whether `name` is a temp whose tag is one of `tags` (Lock::unfinished).
bool left_by(std::string_view name, const std::vector<std::string>& tags);

class Host {
 public:
  virtual ~Host() = default;

  /// "local" or "user@host:port", for messages.
  virtual std::string name() const = 0;

  /// True when paths on the host are paths on this machine (the history can be
  /// opened in place); false when it must be fetched and sent back.
  virtual bool local() const { return false; }

  /// Starts the environment's own Python once (a venv root or a Python executable)
  /// and asks it for its facts. The same process serves compile() later.
  virtual site::Environment probe(const std::string& venv) = 0;

  /// Reads many files at once; a missing file comes back with exists=false.
  virtual std::vector<FileData> read(const std::vector<std::string>& paths) = 0;

  /// Like read, but each file's content is only its lines (each with its '\n') that hold
  /// one of `needles`, so a long file list crosses a connection as the few rows asked for.
  virtual std::vector<FileData> read_lines(const std::vector<std::string>& paths,
                                           const std::vector<std::string>& needles) {
    auto files = read(paths);
    for (auto& f : files) f.content = lines_holding(f.content, needles);
    return files;
  }

  /// Size and modification time of many files at once, nothing read; a missing one
  /// comes back with exists=false. (The default reads them: hosts override it.)
  virtual std::vector<FileStat> stat(const std::vector<std::string>& paths) {
    std::vector<FileStat> out;
    for (auto& f : read(paths)) out.push_back({f.path, f.exists, f.exists && !f.is_dir, f.content.size(), 0});
    return out;
  }
  /// Entries of a folder, sorted by name; empty when it does not exist.
  virtual std::vector<DirEntry> list(const std::string& dir) = 0;

  /// Entries of many folders in one go.
  virtual std::vector<std::vector<DirEntry>> list_many(const std::vector<std::string>& dirs) {
    std::vector<std::vector<DirEntry>> out;
    for (auto& d : dirs) out.push_back(list(d));
    return out;
  }

  /// The hits of each query (in one round trip), folder by folder in `dirs` order,
  /// entries by name.
  virtual std::vector<std::vector<EntryHit>> search(const std::vector<EntryQuery>& queries);

  /// Every regular file under `dir` by relative path (except `skip`), in one go;
  /// nullopt when `dir` does not exist. `have` is what the caller already holds (a copy
  /// from an earlier call): a file whose bytes are the same there is answered with
  /// those bytes instead of crossing over again.
  virtual std::optional<std::map<std::string, std::string>> snapshot(
      const std::string& dir, const std::vector<std::string>& skip,
      const std::map<std::string, std::string>& have) = 0;

  /// Canonical absolute paths (symlinks resolved); nullopt where a path does not exist.
  virtual std::vector<std::optional<std::string>> realpath(const std::vector<std::string>& paths) = 0;

  /// All or nothing. Checks every expected hash and `within` first, writes each file to
  /// a private temp beside it (O_EXCL|O_NOFOLLOW, random name) and fsyncs them all, then
  /// renames them in order: mode kept, hard links broken. Throws sitepatch::Error naming
  /// the file, with nothing changed, when any check, temp or rename fails (renames
  /// already made are put back); PartialWriteError when even putting back failed.
  virtual void write(const std::vector<WriteRequest>& files) = 0;

  /// Removes files; missing ones are fine.
  virtual void remove(const std::vector<std::string>& paths) = 0;

  /// Python's compile() on each source, in the environment's own interpreter.
  virtual std::vector<CompileResult> compile(const std::vector<CompileRequest>& sources) = 0;

  /// For each top-level module name, whether the environment's Python finds it
  /// (importlib.util.find_spec: a path search, nothing imported).
  virtual std::vector<bool> importable(const std::vector<std::string>& modules) = 0;

  /// Runs a user's command there (CommandRun). Throws sitepatch::Error when it cannot
  /// be started or the host cannot run commands.
  virtual CommandResult run_command(const CommandRun& run);

  /// Runs each of `runs` as run_command does (their output collected), at most `jobs`
  /// at once; the results in the order of `runs`. Here: one after another; a local host
  /// runs them in threads, a remote one on the far side, all in one request.
  virtual std::vector<CommandResult> run_commands(const std::vector<CommandRun>& runs, int jobs);

  /// Takes a lock on `path` (a writer creates it and its folder; never through a
  /// symlink, and the folder must be a real one the caller owns, not writable by
  /// others); waits up to `timeout_ms`, then throws naming the path. A shared lock on a
  /// folder that does not exist holds nothing (nullptr here, or a Lock that releases
  /// nothing): there is nothing to wait for. A remote host does not wait for the
  /// answer: a refusal is thrown by the next request (every one after it too), which
  /// goes in the same round trip, and nothing is written before the lock is confirmed.
  virtual std::unique_ptr<Lock> lock(const std::string& path, int timeout_ms,
                                     LockMode mode = LockMode::exclusive) = 0;

  /// What the command reads next, said early: a remote host asks for these files,
  /// folder listings and real paths now, without waiting, so their answers come in the
  /// wait of the next request; the next read, list_many or realpath of each is answered
  /// from that reply, once. A write or remove of a file drops what was read ahead of it,
  /// of its folder, and the real paths of it and its folders. A local host reads when
  /// asked, as before.
  virtual void prefetch(const ReadAhead& /*what*/) {}

  /// Waits for the answers to requests sent without waiting (a remote lock) and throws
  /// what they refused; for a caller that would otherwise send nothing after a lock.
  virtual void confirm() {}

  /// No request follows (every Lock is gone): a connection may start closing while
  /// this process tidies up.
  virtual void finish() {}
};

/// The machine this process runs on.
std::unique_ptr<Host> make_local_host();

/// How to reach another machine.
struct SshTarget {
  std::string user;   // empty: ssh's default
  std::string host;
  std::string port;   // empty: ssh's default
  /// Parses [user@]host[:port] and [user@][v6addr][:port]; refuses what ssh could
  /// take for an option (a leading '-') and characters no host name has.
  static SshTarget parse(const std::string& text);
  std::string str() const;
};

/// A machine reached with the system OpenSSH client, one connection for the whole
/// command: the agent runs there under the environment's own Python.
/// `ssh_command` replaces "ssh"; it is run as git runs GIT_SSH_COMMAND, by
/// `/bin/sh -c '<ssh_command> "$@"'`, so $VARS and quotes mean what they mean in a shell.
std::unique_ptr<Host> make_ssh_host(const SshTarget& target, const std::string& ssh_command);

}  // namespace sitepatch::host
