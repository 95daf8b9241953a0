// Host::run_command where the command runs here: its folder in the caller's cache
// (mkdtemp: 0700, a name nobody chose, in a folder only the caller can change), files made
// with O_EXCL|O_NOFOLLOW, all removed after the run.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <exception>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "host/local_files.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/command.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch/util/temp_folder.hpp"

namespace sitepatch::host {

namespace {

class TempFolder {
 public:
  // The folder's sitecustomize runs in every Python the command starts, and in any it
  // leaves behind (a server started with nohup keeps PYTHONPATH): it lives where no other
  // user can make that name again once it is removed (util::make_run_folder).
  TempFolder() { path_ = util::make_run_folder(); }
  ~TempFolder() {
    for (auto& name : names_) ::unlink((path_ + "/" + name).c_str());
    ::rmdir(path_.c_str());
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  void write(const std::string& name, const std::string& content) {
    if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
      throw Error("internal: run_command file name `" + name + "`");
    std::string p = path_ + "/" + name;
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw Error("cannot write " + p + ": " + std::strerror(errno));
    names_.push_back(name);
    size_t done = 0;
    while (done < content.size()) {
      ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        throw Error("cannot write " + p + ": " + std::strerror(errno));
      }
      done += size_t(n);
    }
    ::close(fd);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> names_;
};

std::string with_folder(std::string value, const std::string& dir) {
  for (size_t at; (at = value.find("{dir}")) != std::string::npos;) value.replace(at, 5, dir);
  return value;
}

}  // namespace

CommandResult run_local_command(const CommandRun& run) {
  TempFolder folder;
  for (auto& [name, content] : run.files) folder.write(name, content);
  std::map<std::string, std::string> set;
  for (auto& [k, v] : run.env) set[k] = with_folder(v, folder.path());
  auto first = [&](const std::string& var, const std::string& dir) {
    const char* was = std::getenv(var.c_str());
    set[var] = dir + (was && *was ? std::string(":") + was : "");
  };
  for (auto& var : run.path_first) first(var, folder.path());
  for (auto& [var, dir] : run.path_first_dirs) first(var, dir);
  auto env = util::environment_with(set);
  // A bare name is looked up on the command's PATH (the environment's bin first), not
  // ours: posix_spawnp would search the PATH sitepatch itself was started with.
  std::vector<std::string> argv = run.argv;
  if (!argv.empty() && argv[0].find('/') == std::string::npos) {
    const char* ours = std::getenv("PATH");
    std::string path = set.count("PATH") ? set["PATH"] : ours ? ours : "";
    for (auto& dir : util::split(path, ':'))
      if (struct stat st; !dir.empty() && ::stat((dir + "/" + argv[0]).c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
                          ::access((dir + "/" + argv[0]).c_str(), X_OK) == 0) {
        argv[0] = dir + "/" + argv[0];
        break;
      }
  }
  if (!run.announce.empty()) {
    std::fputs((run.announce + "\n").c_str(), stderr);
    std::fflush(stderr);
  }
  CommandResult r;
  auto start = std::chrono::steady_clock::now();
  if (run.capture) {
    auto got = util::run_captured(argv, env);
    r.status = got.status;
    r.out = std::move(got.out);
    r.err = std::move(got.err);
  } else {
    r.status = util::run_attached(argv, env);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::vector<CommandResult> run_local_commands(const std::vector<CommandRun>& runs, int jobs) {
  std::vector<CommandResult> out(runs.size());
  std::vector<std::exception_ptr> failed(runs.size());
  std::atomic<size_t> next{0};
  // Each thread takes the next run; a run's own folder and process group keep them
  // apart (their output is collected, never printed here).
  auto work = [&] {
    for (size_t i; (i = next++) < runs.size();) {
      try {
        CommandRun r = runs[i];
        r.capture = true;
        r.announce.clear();
        out[i] = run_local_command(r);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  size_t n = std::min(runs.size(), size_t(std::max(jobs, 1)));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  for (auto& f : failed)
    if (f) std::rethrow_exception(f);
  return out;
}

CommandResult Host::run_command(const CommandRun&) {
  throw Error("running a command on " + name() + " is not supported", Exit::usage);
}

std::vector<CommandResult> Host::run_commands(const std::vector<CommandRun>& runs, int /*jobs*/) {
  std::vector<CommandResult> out;
  for (CommandRun r : runs) {
    r.capture = true;
    out.push_back(run_command(r));
  }
  return out;
}

}  // namespace sitepatch::host
