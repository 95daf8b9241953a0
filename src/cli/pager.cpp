#include "pager.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <spdlog/spdlog.h>

extern char** environ;

namespace sitepatch::cli {
namespace {

pid_t g_pager = -1;
bool g_started = false;
bool g_stderr_paged = false;

}  // namespace

std::string pager_command() {
  const char* cmd = std::getenv("SITEPATCH_PAGER");
  if (!cmd) cmd = std::getenv("PAGER");
  if (!cmd) cmd = "less";
  std::string out = cmd;
  return out == "cat" ? "" : out;
}

void start_pager(const GlobalOptions& g) {
  if (g_started) return;
  g_started = true;
  if (g.json || g.no_pager || !::isatty(STDOUT_FILENO)) return;
  std::string cmd = pager_command();
  if (cmd.empty()) return;
  // less: quit when it fits one screen (F), pass colour through (R), leave the
  // text on the screen (X); the user's own LESS wins, as with git.
  ::setenv("LESS", "FRX", 0);
  ::setenv("LV", "-c", 0);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[0], STDIN_FILENO);
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/bin/sh", &fa, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    spdlog::warn("cannot start the pager `{}`; printing directly", cmd);
    return;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  // A pager the user quits early closes the pipe: what is left is dropped, the
  // command's own exit status stands (it finished its work before printing).
  std::signal(SIGPIPE, SIG_IGN);
  ::dup2(fds[1], STDOUT_FILENO);
  // Notes and errors printed after the diff then land in order, as with git.
  g_stderr_paged = ::isatty(STDERR_FILENO);
  if (g_stderr_paged) ::dup2(fds[1], STDERR_FILENO);
  ::close(fds[1]);
  g_pager = pid;
}

void end_pager() {
  if (g_pager < 0) return;
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  // The pager sees EOF only once no descriptor of ours holds the pipe.
  int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ::dup2(null, STDOUT_FILENO);
  if (g_stderr_paged) ::dup2(null, STDERR_FILENO);
  ::close(null);
  int status = 0;
  while (::waitpid(g_pager, &status, 0) < 0 && errno == EINTR) {
  }
  g_pager = -1;
}

}  // namespace sitepatch::cli
