#include "sitepatch/util/file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <climits>
#include <cstring>

#include "sitepatch/util/error.hpp"

namespace sitepatch::util {

namespace {

tl::expected<std::string, std::string> read_any(const std::string& path, size_t max_bytes, bool streams) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked before
  // a byte is read, so a device or a FIFO never is.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return tl::make_unexpected(path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return tl::make_unexpected(path + ": " + std::strerror(e));
  }
  bool stream = streams && S_ISFIFO(st.st_mode);
  if (stream) {
    // The user's pipe: read on this descriptor, once its writer came (poll reports data, or
    // the hang-up of a writer that already wrote and left). Opening it again instead lost
    // what a quick writer wrote to this one, and then waited for a writer that was gone.
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  auto refuse = [&](const std::string& why) {
    ::close(fd);
    return tl::make_unexpected(path + ": " + why);
  };
  if (!S_ISREG(st.st_mode) && !stream)
    return refuse(std::string("not a regular file (") +
                  (S_ISFIFO(st.st_mode)  ? "a FIFO"
                   : S_ISCHR(st.st_mode) ? "a character device"
                   : S_ISBLK(st.st_mode) ? "a block device"
                   : S_ISSOCK(st.st_mode) ? "a socket"
                   : S_ISDIR(st.st_mode)  ? "a folder"
                                          : "not a file") +
                  "); sitepatch reads only regular files");
  if (size_t(st.st_size) > max_bytes) return refuse(too_large(size_t(st.st_size), max_bytes));
  std::string out;
  out.resize(size_t(st.st_size));
  size_t got = 0;
  for (;;) {
    if (got == out.size()) {
      if (out.size() > max_bytes) return refuse(too_large(out.size(), max_bytes));
      out.resize(out.size() + 4096);  // it grew since fstat
    }
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return refuse(std::string("read error: ") + std::strerror(errno));
    }
    if (n == 0) break;
    got += size_t(n);
  }
  ::close(fd);
  out.resize(got);
  if (got > max_bytes) return tl::make_unexpected(path + ": " + too_large(got, max_bytes));
  return out;
}

}  // namespace

tl::expected<std::string, std::string> read_file(const std::string& path, size_t max_bytes) {
  return read_any(path, max_bytes, false);
}

tl::expected<std::string, std::string> read_named_file(const std::string& path, size_t max_bytes) {
  return read_any(path, max_bytes, true);
}

std::string too_large(size_t bytes, size_t max_bytes) {
  auto mb = [](size_t b) { return std::to_string((b + (1 << 20) - 1) >> 20) + " MB"; };
  return "too large (" + mb(bytes) + "; sitepatch reads files of at most " + mb(max_bytes) + ")";
}

std::string random_name(size_t n) {
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string bytes(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(bytes.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(std::string("getrandom: ") + std::strerror(errno));
    }
    got += size_t(r);
  }
  std::string out;
  for (unsigned char c : bytes) out += alphabet[c % 36];
  return out;
}

bool is_leftover_temp(std::string_view name) { return !temp_tag_of(name).empty(); }

std::string temp_name(std::string_view base, std::string_view tag, std::string_view suffix) {
  return "." + std::string(base) + ".sitepatch-" + std::string(tag) + random_name() + std::string(suffix);
}

std::string_view temp_tag_of(std::string_view name) {
  if (name.size() < 2 || name[0] != '.') return {};
  std::string_view tail;
  if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") tail = name.substr(0, name.size() - 4);
  else if (name.size() > 5 && name.substr(name.size() - 5) == ".orig") tail = name.substr(0, name.size() - 5);
  else return {};
  size_t mark = tail.rfind(".sitepatch-");
  if (mark == std::string_view::npos || mark < 2) return {};
  std::string_view tag = tail.substr(mark + 11);
  if (tag.empty()) return {};
  for (char c : tag)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return {};
  return tag;
}

Dir::Dir(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw Error(path + ": cannot open folder: " + std::strerror(errno));
}

Dir::~Dir() {
  if (fd_ >= 0) ::close(fd_);
}

std::string link_target(const std::string& path) {
  char buf[PATH_MAX + 1];
  ssize_t n = ::readlink(path.c_str(), buf, PATH_MAX);
  return n > 0 ? std::string(buf, size_t(n)) : "?";
}

std::string Dir::real_path() const {
  char buf[PATH_MAX + 1];
  std::string link = "/proc/self/fd/" + std::to_string(fd_);
  ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n > 0) return std::string(buf, size_t(n));
  // No /proc: the path as it resolves now (the best a portable program can do).
  char* r = ::realpath(path_.c_str(), nullptr);
  if (!r) throw Error(path_ + ": cannot resolve: " + std::strerror(errno));
  std::string out = r;
  std::free(r);
  return out;
}

bool inside(const std::string& path, const std::string& root) {
  if (root.empty()) return false;
  if (root == "/") return !path.empty() && path[0] == '/';
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

namespace {
std::pair<std::string, std::string> split(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}
}  // namespace

AtomicFile::AtomicFile(std::string path, int mode, std::string_view tag)
    : path_(std::move(path)), base_(split(path_).second), dir_(split(path_).first) {
  // O_EXCL|O_NOFOLLOW at a random name: a link planted at the name is refused, and
  // nobody can plant at a name they cannot guess.
  for (int attempt = 0; fd_ < 0; ++attempt) {
    tmp_ = temp_name(base_, tag, ".tmp");
    fd_ = ::openat(dir_.fd(), tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0 && (errno != EEXIST || attempt > 8))
      throw Error("cannot write " + path_ + ": no new file can be made in " + dir_.path() + " (" +
                  std::strerror(errno) + ")");
  }
  if (::fchmod(fd_, mode < 0 ? 0644 : mode) != 0) {
    // The destructor does not run for a throwing constructor: clean up here.
    int e = errno;
    ::close(fd_);
    ::unlinkat(dir_.fd(), tmp_.c_str(), 0);
    throw Error(dir_.path() + "/" + tmp_ + ": cannot set mode: " + std::strerror(e));
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlinkat(dir_.fd(), tmp_.c_str(), 0);
}

void AtomicFile::write(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(path_ + ": cannot write: " + std::strerror(errno));
    }
    data.remove_prefix(size_t(n));
  }
}

void AtomicFile::close_temp(bool sync) {
  if (fd_ < 0) return;
  if (sync && ::fsync(fd_) != 0) throw Error(path_ + ": cannot write (fsync): " + std::strerror(errno));
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw Error(path_ + ": cannot write (close): " + std::strerror(errno));
}

void AtomicFile::replace() {
  if (::renameat(dir_.fd(), tmp_.c_str(), dir_.fd(), base_.c_str()) != 0)
    throw Error(path_ + ": cannot replace: " + std::strerror(errno));
  committed_ = true;
}

void AtomicFile::stage() { close_temp(true); }

void AtomicFile::commit(bool sync_folder) {
  stage();
  replace();
  if (sync_folder) ::fsync(dir_.fd());
}

void AtomicFile::commit_new() {
  stage();
  if (::linkat(dir_.fd(), tmp_.c_str(), dir_.fd(), base_.c_str(), 0) != 0)
    throw Error(path_ + (errno == EEXIST ? std::string(": exists; nothing was replaced") : ": cannot write: " + std::string(std::strerror(errno))));
  ::unlinkat(dir_.fd(), tmp_.c_str(), 0);
  committed_ = true;
  ::fsync(dir_.fd());
}

void AtomicFile::commit_unsynced() {
  close_temp(false);
  replace();
}

}  // namespace sitepatch::util
