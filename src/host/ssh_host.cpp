// Another machine through the system OpenSSH client: one connection per command,
// the agent run there by the environment's own Python, nothing installed.
#include <cstdio>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <spdlog/spdlog.h>

#include "host/agent_boot.hpp"
#include "host/agent_client.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::host {
namespace {

// $0 of the local shell that runs --ssh-command: its own errors start with it.
constexpr const char* kShellName = "sitepatch-ssh";

// `unsafe PATH`, in POSIX sh, before the environment's Python runs there: prints why a
// user other than this one and root could change where PATH leads, and fails. The same
// walk as util::unsafe_path (and the agent's): from /, folder by folder, each link
// followed as the kernel would; every entry owned by root or us; a folder others may
// write passes only when sticky; the last folder not writable by others, nor the last
// name when it is a file. `ls -ldn` gives mode, owner and group; a link's target is what
// follows "PATH -> ". `wr MODE GID WHERE LAST` judges one entry's mode: `ls` shows an ACL
// only as a trailing `+`, so one whose mask allows writing (group bits `w`) is refused
// whoever it names, as is any ACL on the last folder (a default ACL there gives what is
// made in it to whomever it names): more than util::unsafe_path refuses, and the
// message says so.
constexpr const char* kUnsafeFunction =
    "wr() { "
    "case $1 in ????????w*) echo \"$3 is writable by other users\"; return 0;; "
    "?????w*) if [ \"$2\" != 0 ]; then echo \"$3 is writable by its group $2\"; return 0; fi;; esac; "
    "case $4$1 in ??????w????+*|1??????????+*) echo \"$3 has a POSIX ACL ($1) that may give another user write "
    "(this check over ssh reads modes, not ACLs: it refuses any ACL that could; see getfacl $3)\"; return 0;; esac; "
    "return 1; }; "
    "unsafe() { "
    "set -f; me=$(id -u); rest=$1; n=0; "
    "case $rest in /*) ;; *) rest=$(pwd -P)/$rest;; esac; "
    "cur=/; set -- $(ls -ldn /); cm=$1; cg=$4; "
    "if [ \"$3\" != 0 ] && [ \"$3\" != \"$me\" ]; then echo \"/ belongs to uid $3, another user\"; return 0; fi; "
    "while :; do "
    "while case $rest in /*) true;; *) false;; esac; do rest=${rest#/}; done; "
    "[ -z \"$rest\" ] && break; "
    "name=${rest%%/*}; case $rest in */*) rest=${rest#*/};; *) rest=;; esac; "
    "case $name in .) continue;; ..) cur=$(dirname \"$cur\"); set -- $(ls -ldn \"$cur\"); cm=$1; cg=$4; continue;; esac; "
    "case $cm in ?????????[tT]*) ;; *) if wr \"$cm\" \"$cg\" \"$cur\" 0; then return 0; fi;; esac; "
    "here=${cur%/}/$name; "
    "l=$(ls -ldn -- \"$here\" 2>/dev/null) || return 1; "
    "set -- $l; "
    "if [ \"$3\" != 0 ] && [ \"$3\" != \"$me\" ]; then echo \"$here belongs to uid $3, another user\"; return 0; fi; "
    "case $1 in "
    "l*) n=$((n+1)); if [ $n -gt 40 ]; then echo \"$here: too many levels of symbolic links\"; return 0; fi; "
    "t=${l#*\" $here -> \"}; case $t in /*) cur=/; set -- $(ls -ldn /); cm=$1; cg=$4;; esac; rest=$t/$rest;; "
    "d*) cur=$here; cm=$1; cg=$4;; "
    "*) if [ -n \"$rest\" ]; then echo \"$here is not a folder\"; return 0; fi; "
    "if wr \"$1\" \"$4\" \"$here\" 0; then return 0; fi; return 1;; "
    "esac; "
    "done; "
    "if wr \"$cm\" \"$cg\" \"$cur\" 1; then return 0; fi; "
    "return 1; }; ";

// The one command the remote shell sees. It is constant: the venv path and the
// agent's source arrive on stdin, so nothing the user typed is ever parsed by a
// remote shell. `read -r` takes the path line; before anything of the venv runs, `unsafe`
// checks what host::start_paths lists locally: the venv, its Python, pyvenv.cfg, its
// site-packages (a link that leads nowhere is judged by where it leads, never skipped)
// and the base installation's standard library (home's parent in pyvenv.cfg); Python then
// starts with -S and reads exactly the bootstrap and the agent's bytes (agent_boot.cpp),
// whose first act is to check every other folder `site` would import from; what follows
// is the protocol.
std::string remote_command() {
  std::string script =
      std::string(kUnsafeFunction) +
      // chk PATH: refuses (exit 96) a path another user can change; a name that is not
      // there, and no link either, is nothing Python reads.
      "chk() { [ -e \"$1\" ] || [ -h \"$1\" ] || return 0; "
      "if why=$(unsafe \"$1\"); then "
      "echo \"refusing to run $p: $why, who could make it run their code as you; run sitepatch as that user\" >&2; "
      "exit 96; fi; }; "
      // base DIR: a base installation's folder and the standard library Python starts
      // from there, for each version the venv or the base has.
      "base() { chk \"$1\"; set +f; for s in \"$v\"/lib/python3.* \"$1\"/lib/python3.*; do s=${s##*/}; "
      "case $s in *.zip|'python3.*') continue;; esac; z=${s%%.*}${s#*.}.zip; "
      "chk \"$1/lib/$s\"; chk \"$1/lib/$s/lib-dynload\"; chk \"$1/lib/$z\"; done; }; "
      "IFS= read -r v || exit 97; "
      "for p in \"$v/bin/python3\" \"$v/bin/python\" \"$v\"; do "
      "if [ -f \"$p\" ] && [ -x \"$p\" ]; then "
      "chk \"$v\"; chk \"$p\"; chk \"$v/pyvenv.cfg\"; set +f; "
      "for w in \"$v\"/lib*/python*/site-packages; do chk \"$w\"; done; "
      // Every `home` line, the key matched as Python matches it (any case, spaces aside).
      "hs=; [ -f \"$v/pyvenv.cfg\" ] && hs=$(sed -n "
      "'s/^[[:space:]]*[Hh][Oo][Mm][Ee][[:space:]]*=[[:space:]]*\\(.*[^[:space:]]\\)[[:space:]]*$/\\1/p' "
      "\"$v/pyvenv.cfg\"); "
      "if [ -n \"$hs\" ]; then printf '%s\\n' \"$hs\" | while IFS= read -r h; do "
      "case $h in /*) base \"$(dirname \"$h\")\";; *) base \"$(dirname \"$v/$h\")\";; esac; done || exit 96; "
      "else base \"$v\"; fi; "
      "exec \"$p\" -I -S -u -c \"" + agent_boot_code() + "\"; fi; done; "
      "for n in python3 python; do if [ -L \"$v/bin/$n\" ] || [ -e \"$v/bin/$n\" ]; then "
      "echo \"$v is not a Python environment you can use: $v/bin/$n is there, but you cannot run it "
      "(a link into a folder you cannot read? ls -lL $v/bin/$n)\" >&2; exit 98; fi; done; "
      "if [ -e \"$v\" ]; then echo \"$v is not a Python environment: no bin/python3 or bin/python in it\" >&2; exit 98; fi; "
      "echo \"no Python environment at $v: $v does not exist\" >&2; exit 99";
  return "exec /bin/sh -c " + util::shell_quote(script);
}

class SshHost : public Host {
 public:
  SshHost(SshTarget target, std::vector<std::string> ssh, std::string command)
      : target_(std::move(target)), ssh_(std::move(ssh)), command_(std::move(command)) {}

  ~SshHost() override {
    if (agent_)
      spdlog::info("ssh: 1 connection to {}, {} round trip(s)", target_.str(), agent_->round_trips());
  }

  std::string name() const override { return target_.str(); }

  site::Environment probe(const std::string& venv) override {
    if (venv.find('\n') != std::string::npos || venv.find('\0') != std::string::npos)
      throw Error("--venv: a path on " + target_.str() + " cannot contain a line break", Exit::usage);
    std::vector<std::string> argv = ssh_;
    // BatchMode: never stop to ask for a password or a host key; -T: no terminal.
    // ConnectTimeout bounds the TCP connect and the banner exchange (a host that accepts
    // and never speaks waited forever); ServerAlive ends a connection whose far side is
    // gone within 45 s. ssh takes the first value it is given: one in --ssh-command
    // (before these) wins.
    for (const char* a : {"-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-o", "ServerAliveInterval=15", "-o",
                          "ServerAliveCountMax=3", "-T"})
      argv.push_back(a);
    if (!target_.port.empty()) argv.insert(argv.end(), {"-p", target_.port});
    if (!target_.user.empty()) argv.insert(argv.end(), {"-l", target_.user});
    argv.insert(argv.end(), {"--", target_.host, remote_command()});
    spdlog::debug("ssh: connecting to {}", target_.str());
    agent_ = std::make_unique<AgentClient>(argv, target_.str(), venv + "\n" + agent_boot_payload(),
                                           [this](int status, const std::string& err) { return explain(status, err); });
    auto env = agent_->hello();
    spdlog::debug("ssh: agent started by {} and probed", env.python);
    return env;
  }

  std::vector<FileData> read(const std::vector<std::string>& paths) override { return a().read(paths); }
  std::vector<FileData> read_lines(const std::vector<std::string>& paths,
                                   const std::vector<std::string>& needles) override {
    return a().read_lines(paths, needles);
  }
  std::vector<DirEntry> list(const std::string& dir) override { return a().list(dir); }
  std::vector<FileStat> stat(const std::vector<std::string>& paths) override { return a().stat(paths); }
  std::vector<std::vector<EntryHit>> search(const std::vector<EntryQuery>& qs) override { return a().search(qs); }
  std::vector<std::vector<DirEntry>> list_many(const std::vector<std::string>& dirs) override {
    return a().list_many(dirs);
  }
  std::optional<std::map<std::string, std::string>> snapshot(
      const std::string& dir, const std::vector<std::string>& skip,
      const std::map<std::string, std::string>& have) override {
    return a().snapshot(dir, skip, have);
  }
  std::vector<std::optional<std::string>> realpath(const std::vector<std::string>& paths) override {
    return a().realpath(paths);
  }
  void finish() override {
    if (agent_) agent_->finish();
  }
  void prefetch(const ReadAhead& what) override {
    if (agent_) agent_->prefetch(what);
  }
  void confirm() override {
    if (agent_) agent_->confirm();
  }
  void write(const std::vector<WriteRequest>& files) override { a().write(files); }
  void remove(const std::vector<std::string>& paths) override { a().remove(paths); }
  std::vector<bool> importable(const std::vector<std::string>& modules) override {
    return modules.empty() ? std::vector<bool>{} : a().importable(modules);
  }

  // The command runs there, through the agent on the one connection; its output comes
  // back when it ends and is printed here unless the caller collects it.
  CommandResult run_command(const CommandRun& run) override {
    // The far side says nothing until the command ends: the line goes first here.
    if (!run.announce.empty()) {
      std::fputs((run.announce + "\n").c_str(), stderr);
      std::fflush(stderr);
    }
    CommandResult r = a().run_command(run);
    if (!run.capture) {
      std::fwrite(r.out.data(), 1, r.out.size(), stdout);
      std::fflush(stdout);
      std::fwrite(r.err.data(), 1, r.err.size(), stderr);
      r.out.clear();
      r.err.clear();
    }
    return r;
  }

  std::vector<CommandResult> run_commands(const std::vector<CommandRun>& runs, int jobs) override {
    return runs.empty() ? std::vector<CommandResult>{} : a().run_commands(runs, jobs);
  }

  std::vector<CompileResult> compile(const std::vector<CompileRequest>& sources) override {
    return a().compile(sources);
  }
  std::unique_ptr<Lock> lock(const std::string& path, int timeout_ms, LockMode mode) override {
    return a().lock(path, timeout_ms, mode);
  }

 private:
  AgentClient& a() {
    if (!agent_) throw Error("internal: " + target_.str() + " used before probe()");
    return *agent_;
  }

  // What ssh's exit status and last words mean to a user.
  std::string explain(int status, const std::string& err) const {
    std::string last = util::trim(err);
    int trips = agent_ ? agent_->round_trips() : 0;  // none while the client is being made
    // The shell could not run the command (not found, not executable): ssh never started.
    if ((status == 127 || status == 126) && trips == 0 &&
        util::starts_with(last, std::string(kShellName) + ":"))
      return "cannot run the ssh command `" + command_ + "` (from --ssh-command or SITEPATCH_SSH): " + last;
    if (status == 255 && trips == 0)
      return "cannot reach " + target_.str() + " over ssh: " + (last.empty() ? "ssh failed" : last);
    if (status == 255 || status >= 128)
      return "the connection to " + target_.str() + " was lost (exit status " + std::to_string(status) +
             ")" + (last.empty() ? "" : ": " + last);
    // 98, 99: the --venv path names no environment there, the caller's to fix (exit 2).
    if (status == 98 || status == 99) throw Error(target_.str() + ": " + last, Exit::usage);
    if (status == 96) return target_.str() + ": " + last;
    // 95: the agent refused a folder its Python would import from (agent/trust.py).
    if (status == 95) return target_.str() + ": " + last.substr(last.find_last_of('\n') + 1);
    if (status == 127) return target_.str() + ": no /bin/sh there to start Python: " + last;
    return "";  // the agent's own message stands
  }

  SshTarget target_;
  std::vector<std::string> ssh_;
  std::string command_;  // as the user wrote it
  std::unique_ptr<AgentClient> agent_;
};

// The words of `cmd` when /bin/sh would read them exactly so: nothing but plain
// characters and '...' quotes (no $, `, \, ~, globs, redirections, assignments), and a
// first word that names an executable here. Anything else, and a command that is not
// found, goes through the shell, which expands it and words the error.
std::optional<std::vector<std::string>> plain_words(const std::string& cmd) {
  bool quoted = false;
  for (char c : cmd) {
    if (c == '\'') quoted = !quoted;
    else if (!quoted && !std::isalnum(static_cast<unsigned char>(c)) &&
             std::string_view(" @%+=:,./_-").find(c) == std::string_view::npos)
      return std::nullopt;
  }
  if (quoted) return std::nullopt;
  auto words = util::shell_split(cmd);
  if (words.empty() || words[0].find('=') != std::string::npos) return std::nullopt;
  if (words[0].find('/') != std::string::npos) {
    if (::access(words[0].c_str(), X_OK) != 0) return std::nullopt;
  } else {
    const char* path = std::getenv("PATH");
    bool found = false;
    for (auto& dir : util::split(path ? path : "", ':'))
      if (!dir.empty() && ::access((dir + "/" + words[0]).c_str(), X_OK) == 0) {
        found = true;
        break;
      }
    if (!found) return std::nullopt;
  }
  return words;
}

}  // namespace

std::unique_ptr<Host> make_ssh_host(const SshTarget& target, const std::string& ssh_command) {
  std::string cmd = util::trim(ssh_command.empty() ? "ssh" : ssh_command);
  if (cmd.empty()) throw Error("--ssh-command is empty", Exit::usage);
  // Words a shell would pass through unchanged run without one (a shell's start is a
  // few ms of every command).
  if (auto words = plain_words(cmd)) return std::make_unique<SshHost>(target, std::move(*words), cmd);
  // As git runs GIT_SSH_COMMAND: a local shell expands what the user wrote ($HOME,
  // quotes) and ssh's own arguments follow as "$@", untouched. The remote side still
  // gets one constant command.
  std::vector<std::string> ssh{"/bin/sh", "-c", cmd + " \"$@\"", kShellName};
  return std::make_unique<SshHost>(target, std::move(ssh), cmd);
}

}  // namespace sitepatch::host
