// The lock every sitepatch command on an environment takes: in a real folder the caller
// owns (the history lives there too), opened without following links.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>
#include <thread>

#include "host/agent_client.hpp"
#include "host/local_files.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/safe_path.hpp"

namespace sitepatch::host {
namespace {

class FileLock : public Lock {
 public:
  FileLock(int fd, bool writer, std::vector<std::string> unfinished)
      : fd_(fd), writer_(writer), unfinished_(std::move(unfinished)) {}
  ~FileLock() override {
    // Released, not killed: every temp this command made is gone (AtomicFile), so its
    // tag, and those of the writers it cleaned up after, need no longer be named.
    if (writer_) (void)!::ftruncate(fd_, 0);
    ::close(fd_);  // closing releases the flock
  }
  std::vector<std::string> unfinished() override { return unfinished_; }

 private:
  int fd_;
  bool writer_;
  std::vector<std::string> unfinished_;
};

/// The tags a lock file names (lock_text): what writers that never released it made.
std::vector<std::string> tags_in(int fd) {
  char buf[4096];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  return n > 0 ? lock_tags(std::string_view(buf, size_t(n))) : std::vector<std::string>{};
}

/// The folder of the lock (the state folder): a real folder, and for a writer one it
/// owns that nobody else may write to, since the history's files are created there.
/// False when a reader finds no folder.
bool check_folder(const std::string& dir, LockMode mode) {
  // Every folder above it too: whoever can rename one can swap the history for a link.
  if (auto why = util::unsafe_path(dir)) throw Error(unsafe_state_message(dir, *why));
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) throw Error("cannot use " + dir + ": " + std::strerror(errno));
    if (mode == LockMode::shared) return false;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      throw Error("cannot create " + dir + ": " + std::strerror(errno));
    if (auto why = util::unsafe_path(dir)) throw Error(unsafe_state_message(dir, *why));
    if (::lstat(dir.c_str(), &st) != 0) throw Error("cannot use " + dir + ": " + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode))
    throw Error(dir + " is a symbolic link (to " + util::link_target(dir) +
                "); sitepatch keeps its history and lock only in a real folder: remove the link "
                "(or give --state-dir)");
  if (!S_ISDIR(st.st_mode)) throw Error(dir + " is not a folder; sitepatch keeps its history there: move it away");
  if (mode == LockMode::exclusive) {
    if (st.st_uid != ::geteuid())
      throw Error(dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " +
                  std::to_string(::geteuid()) +
                  "): files it creates there could be redirected by that user; run sitepatch as its "
                  "owner, or take it over (chown -R " + std::to_string(::geteuid()) + " " + dir + ")");
    if (st.st_mode & 022)
      throw Error(dir + " is writable by other users (mode " + ([&] {
                    char m[8];
                    std::snprintf(m, sizeof m, "%03o", unsigned(st.st_mode & 0777));
                    return std::string(m);
                  })() + "): files sitepatch creates there could be redirected; chmod go-w " + dir);
  }
  return true;
}

}  // namespace

std::string unsafe_state_message(const std::string& folder, const std::string& why) {
  return "refusing to keep the history in " + folder + ": " + why +
         ", who could redirect what sitepatch writes there; give --state-dir a folder only you can write, "
         "or run sitepatch as that user";
}

std::unique_ptr<Lock> lock_local(const std::string& path, int timeout_ms, LockMode mode, const std::string& tag) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (!check_folder(dir, mode)) return nullptr;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ELOOP)
    throw Error(path + " is a symbolic link (to " + util::link_target(path) +
                "); sitepatch never opens its lock through a link: remove it");
  if (fd < 0 && mode == LockMode::shared && (errno == EACCES || errno == EROFS))
    fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);  // a reader that may not create it
  if (fd < 0) {
    if (mode == LockMode::shared && errno == ENOENT) return nullptr;
    throw Error("cannot create lock " + path + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    throw Error(path + " is not a lock file sitepatch made (" +
                (S_ISREG(st.st_mode) ? "it has other hard links" : std::string("not a regular file")) +
                "); remove it");
  }
  int op = mode == LockMode::shared ? LOCK_SH : LOCK_EX;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (::flock(fd, op | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline) {
      int e = errno;
      ::close(fd);
      if (e != EWOULDBLOCK) throw Error("cannot lock " + path + ": " + std::strerror(e));
      throw Error(lock_held(path));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::string> earlier;
  if (mode == LockMode::exclusive) {
    // Who holds it, for a human who looks, and the tag of the temps it makes.
    earlier = tags_in(fd);
    std::string text = lock_text(::getpid(), tag, earlier);
    if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, text.data(), text.size(), 0);
  }
  return std::make_unique<FileLock>(fd, mode == LockMode::exclusive, std::move(earlier));
}

}  // namespace sitepatch::host
