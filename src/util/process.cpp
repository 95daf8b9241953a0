#include "sitepatch/util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstring>
#include <thread>

#include "sitepatch/util/error.hpp"

namespace sitepatch::util {
namespace {

int decode_status(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return 255;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC))
    throw Error(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Report exec failure through a close-on-exec pipe so "no such Python" is an error
  // here, not a silent exit status later.
  int ex[2];
  if (::pipe2(ex, O_CLOEXEC)) throw Error(std::string("pipe: ") + std::strerror(errno));
  pid_ = ::fork();
  if (pid_ < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvp(args[0], args.data());
    int e = errno;
    (void)!::write(ex[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(ex[1]);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  int e = 0;
  ssize_t n = ::read(ex[0], &e, sizeof e);
  ::close(ex[0]);
  if (n == sizeof e) {
    ::close(in_);
    ::close(out_);
    ::close(err_);
    in_ = out_ = err_ = -1;
    int st;
    ::waitpid(pid_, &st, 0);
    waited_ = true;
    throw Error(argv[0] + ": cannot run: " + std::strerror(e));
  }
  ::fcntl(err_, F_SETFL, ::fcntl(err_, F_GETFL) | O_NONBLOCK);
  // write() waits in poll, where it can read stderr too, never in a blocked write.
  ::fcntl(in_, F_SETFL, ::fcntl(in_, F_GETFL) | O_NONBLOCK);
}

Process::~Process() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
  // Up to half a second for the child to finish on its own (an ssh client closes its
  // channel first). Every command waits here once: a pidfd wakes at the exit itself;
  // where there is none (kernels before 5.3), 1 ms steps.
  int steps = 500;
  if (!waited_) {
    int pidfd = int(::syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd >= 0) {
      struct pollfd p {pidfd, POLLIN, 0};
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
      for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        if (left.count() <= 0 || ::poll(&p, 1, int(left.count()) + 1) != -1 || errno != EINTR) break;
      }
      ::close(pidfd);
      steps = 1;  // one look: it has exited, or the half second is over
    }
  }
  for (int i = 0; i < steps && !waited_; ++i) {
    int st;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      waited_ = true;
      break;
    }
    if (steps > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!waited_) {
    ::kill(pid_, SIGKILL);
    int st;
    ::waitpid(pid_, &st, 0);
  }
  // Also after wait(): stdout may not have been read to EOF.
  if (out_ >= 0) ::close(out_);
  if (err_ >= 0) ::close(err_);
}

void Process::keep_stderr(const char* data, size_t n) {
  size_t head = std::min(n, err_keep_ - std::min(err_keep_, err_buf_.size()));
  err_buf_.append(data, head);
  err_tail_.append(data + head, n - head);
  // Trimmed once it holds twice what is kept: each byte is moved at most once.
  if (err_tail_.size() > 2 * err_keep_) {
    size_t cut = err_tail_.size() - err_keep_;
    err_dropped_ += cut;
    err_tail_.erase(0, cut);
  }
}

void Process::drain_stderr(bool block) {
  if (err_ < 0) return;
  char buf[65536];
  for (;;) {
    if (block) {
      pollfd p{err_, POLLIN, 0};
      ::poll(&p, 1, -1);
    }
    ssize_t n = ::read(err_, buf, sizeof buf);
    if (n > 0) {
      keep_stderr(buf, size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && block) continue;
    if (n == 0) {
      ::close(err_);
      err_ = -1;
    }
    return;
  }
}

int Process::poll_timeout() const {
  if (!deadline_) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - std::chrono::steady_clock::now());
  return int(std::clamp<long long>(left.count() + 1, 0, 60000));
}

void Process::check_deadline() const {
  if (deadline_ && std::chrono::steady_clock::now() >= *deadline_) throw Timeout("no answer in time");
}

void Process::write(std::string_view data) {
  if (in_ < 0) throw Error("child process stopped reading: its input is closed");
  // Ignore SIGPIPE for this write: a dead child becomes an error, not our death.
  struct sigaction ign {}, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  while (!data.empty()) {
    // A child that writes stderr before it reads stdin would block on a full pipe
    // while this write blocks on its full stdin: read its stderr while waiting.
    pollfd p[2] = {{in_, POLLOUT, 0}, {err_, POLLIN, 0}};
    int ready = ::poll(p, err_ >= 0 ? 2 : 1, poll_timeout());
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      try {
        check_deadline();
      } catch (const Timeout&) {
        ::sigaction(SIGPIPE, &old, nullptr);
        throw;
      }
      continue;
    }
    if (err_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) drain_stderr(false);
    if (!(p[0].revents & (POLLOUT | POLLERR | POLLHUP))) continue;
    ssize_t n = ::write(in_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      int e = errno;
      ::sigaction(SIGPIPE, &old, nullptr);
      throw Error(std::string("child process stopped reading: ") + std::strerror(e));
    }
    data.remove_prefix(size_t(n));
  }
  ::sigaction(SIGPIPE, &old, nullptr);
}

bool Process::fill() {
  for (;;) {
    if (out_ < 0) return false;
    pollfd p[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (::poll(p, err_ >= 0 ? 2 : 1, poll_timeout()) == 0) {
      check_deadline();  // what is ready is read first, however late
      continue;
    }
    if (err_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) drain_stderr(false);
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    // What was returned already goes once it is half the buffer: moving the rest
    // costs no more than the bytes that were returned.
    if (out_start_ > 0 && out_start_ >= out_buf_.size() / 2) {
      out_buf_.erase(0, out_start_);
      out_scanned_ -= out_start_;
      out_start_ = 0;
    }
    char buf[65536];
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(out_);
      out_ = -1;
      return false;
    }
    out_buf_.append(buf, size_t(n));
    return true;
  }
}

bool Process::read_line(std::string& line, size_t max) {
  for (;;) {
    size_t nl = out_buf_.find('\n', out_scanned_);
    if (nl != std::string::npos) {
      if (nl - out_start_ > max) break;
      line.assign(out_buf_, out_start_, nl - out_start_);
      out_start_ = out_scanned_ = nl + 1;
      return true;
    }
    out_scanned_ = out_buf_.size();
    if (out_buf_.size() - out_start_ > max) break;
    if (!fill()) {
      if (out_start_ == out_buf_.size()) return false;
      line.assign(out_buf_, out_start_, std::string::npos);
      out_buf_.clear();
      out_start_ = out_scanned_ = 0;
      return true;
    }
  }
  // The line is not kept: nothing after it can be read as the child meant it.
  out_buf_.clear();
  out_buf_.shrink_to_fit();
  out_start_ = out_scanned_ = 0;
  throw Error("a line longer than " +
              (max >= (1 << 20) ? std::to_string(max >> 20) + " MB" : std::to_string(max) + " bytes"));
}

void Process::close_input() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

std::string Process::read_all() {
  // Byte-exact: a last line without '\n' comes back without one.
  while (fill()) {
  }
  std::string all = out_buf_.substr(out_start_);
  out_buf_.clear();
  out_start_ = out_scanned_ = 0;
  return all;
}

int Process::wait() {
  if (waited_) return status_;
  if (in_ >= 0) ::close(in_);
  in_ = -1;
  if (err_ >= 0) {
    ::fcntl(err_, F_SETFL, ::fcntl(err_, F_GETFL) & ~O_NONBLOCK);
    drain_stderr(true);
  }
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  waited_ = true;
  status_ = decode_status(st);
  return status_;
}

std::string Process::stderr_text() {
  drain_stderr(false);
  if (err_tail_.size() > err_keep_) {
    err_dropped_ += err_tail_.size() - err_keep_;
    err_tail_.erase(0, err_tail_.size() - err_keep_);
  }
  if (!err_dropped_) return err_buf_ + err_tail_;
  return err_buf_ + "\n[" + std::to_string(err_dropped_) + " bytes of stderr left out]\n" + err_tail_;
}

std::string Process::communicate(std::string_view input) {
  struct sigaction ign {}, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  if (input.empty()) close_input();
  // One loop over the three pipes: a child that fills its stdout or stderr pipe before
  // it has read its input cannot deadlock us.
  while (out_ >= 0 || err_ >= 0) {
    pollfd p[3] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}, {in_, POLLOUT, 0}};
    if (::poll(p, 3, -1) < 0) continue;
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) drain_stderr(false);
    if (p[2].revents & (POLLOUT | POLLERR | POLLHUP)) {
      ssize_t n = ::write(in_, input.data(), input.size());
      if (n > 0) input.remove_prefix(size_t(n));
      // A child that stopped reading gets no more; its output still counts.
      if (input.empty() || (n < 0 && errno != EINTR && errno != EAGAIN)) close_input();
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      ssize_t n = ::read(out_, buf, sizeof buf);
      if (n > 0) out_buf_.append(buf, size_t(n));
      else if (n == 0 || errno != EINTR) {
        ::close(out_);
        out_ = -1;
      }
    }
  }
  close_input();
  ::sigaction(SIGPIPE, &old, nullptr);
  std::string all = out_buf_.substr(out_start_);
  out_buf_.clear();
  out_start_ = out_scanned_ = 0;
  return all;
}

RunResult run(const std::vector<std::string>& argv, std::string_view input) {
  Process p(argv);
  p.err_keep_ = SIZE_MAX / 4;  // the caller asked for all of it
  RunResult r;
  r.out = p.communicate(input);
  r.status = p.wait();
  r.err = p.stderr_text();
  return r;
}

}  // namespace sitepatch::util
