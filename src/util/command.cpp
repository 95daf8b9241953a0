#include "sitepatch/util/command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/interrupt.hpp"

extern char** environ;

namespace sitepatch::util {

namespace {

std::vector<char*> pointers(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(std::string("waitpid: ") + std::strerror(errno));
  return exit_status(status);
}

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            posix_spawn_file_actions_t* actions, bool own_group = false) {
  if (argv.empty()) throw Error("no command to run", Exit::usage);
  auto args = pointers(argv);
  auto envp = pointers(env);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The child starts with the default dispositions, whatever this process ignores.
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, args[0], actions, &attr, args.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw Error("cannot run " + argv[0] + ": " + std::strerror(rc), Exit::failed);
  return pid;
}

/// Kills a captured command's process group when this process ends without saying it
/// is done (SIGKILL included): a `sh` that reads the group from a socket only we hold, then
/// waits for a second line; end of file means we are gone. Nothing runs this side: the
/// kernel closes the pipe for us.
class GroupWatch {
 public:
  GroupWatch() {
    // A socket, not a pipe: send(MSG_NOSIGNAL) to a watch that is gone is an error, where
    // a pipe's write would kill us with SIGPIPE.
    int p[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, p[0], 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    try {
      // Signals from the terminal are for us: the watch outlives us to act on them.
      watcher_ = spawn({"/bin/sh", "-c",
                        "trap '' INT QUIT HUP TERM; read g || exit 0; read done || kill -KILL -$g"},
                       environment_with({}), &actions);
    } catch (const Error&) {
      watcher_ = -1;  // without it the command still runs; only a kill of ours leaves it
    }
    posix_spawn_file_actions_destroy(&actions);
    ::close(p[0]);
    if (watcher_ > 0) write_end_ = p[1];
    else ::close(p[1]);
  }
  ~GroupWatch() {
    if (write_end_ >= 0) {
      say("done\n");
      ::close(write_end_);
    }
    if (watcher_ > 0) {
      int st;
      while (::waitpid(watcher_, &st, 0) < 0 && errno == EINTR) {
      }
    }
  }
  GroupWatch(const GroupWatch&) = delete;
  GroupWatch& operator=(const GroupWatch&) = delete;
  // Digits only reach the shell: dash's kill takes `-PGID`, not `-- -PGID`.
  void watch(pid_t group) { say(std::to_string(group) + "\n"); }

 private:
  void say(const std::string& line) {
    if (write_end_ >= 0 && ::send(write_end_, line.data(), line.size(), MSG_NOSIGNAL) != ssize_t(line.size())) {
      ::close(write_end_);
      write_end_ = -1;
    }
  }
  pid_t watcher_ = -1;
  int write_end_ = -1;
};

}  // namespace

std::vector<std::string> environment_with(const std::map<std::string, std::string>& set) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    if (!set.count(name)) out.push_back(std::move(kv));
  }
  for (auto& [k, v] : set) out.push_back(k + "=" + v);
  return out;
}

namespace {

/// Ends the command's process group once an InterruptGuard noted a signal: SIGTERM,
/// SIGKILL two seconds later; two more and the pipes are given up on (a process that
/// left the group may hold them).
class GroupStop {
 public:
  explicit GroupStop(pid_t group) : group_(group) {}
  bool given_up() {
    if (!util::interrupted()) return false;
    auto now = std::chrono::steady_clock::now();
    if (stage_ == 0) {
      ::kill(-group_, SIGTERM);
      since_ = now;
      stage_ = 1;
    } else if (stage_ == 1 && now - since_ > std::chrono::seconds(2)) {
      ::kill(-group_, SIGKILL);
      stage_ = 2;
    }
    return stage_ == 2 && now - since_ > std::chrono::seconds(4);
  }

 private:
  pid_t group_;
  int stage_ = 0;
  std::chrono::steady_clock::time_point since_;
};

}  // namespace

int run_attached(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  // As system(3) does: the terminal's ^C goes to the child, which decides; we wait.
  struct sigaction ignore {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 0;
  try {
    pid_t pid = spawn(argv, env, nullptr);
    status = wait_for(pid);
  } catch (...) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    throw;
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  return status;
}

RunResult run_captured(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw Error(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  pid_t pid = -1;
  GroupWatch watch;
  try {
    // In a group of its own, which the watch kills should we be killed mid-run: a
    // --check-with server must not outlive the sitepatch that started it.
    pid = spawn(argv, env, &actions, true);
    watch.watch(pid);
  } catch (...) {
    posix_spawn_file_actions_destroy(&actions);
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    throw;
  }
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  RunResult r{0, "", ""};
  struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* into[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  GroupStop stop(pid);
  while (open_fds > 0 && !stop.given_up()) {
    // A short wait, not forever: a signal that lands just before poll is seen at the next turn.
    int ready = ::poll(fds, 2, 200);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[k].fd, buf, sizeof buf);
      if (n > 0) {
        into[k]->append(buf, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[k].fd);
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  // Interrupted: whatever of the group is left (a process that closed its pipes) goes too.
  if (util::interrupted()) ::kill(-pid, SIGKILL);
  r.status = wait_for(pid);
  return r;
}

}  // namespace sitepatch::util
