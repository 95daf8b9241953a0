#include "sitepatch/util/file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sitepatch/util/error.hpp"

namespace sitepatch::util {

tl::expected<std::string, std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return tl::make_unexpected(path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return tl::make_unexpected(path + ": read error");
  return ss.str();
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

bool is_leftover_temp(std::string_view name) {
  if (name.size() < 2 || name[0] != '.') return false;
  std::string_view tail;
  if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") tail = name.substr(0, name.size() - 4);
  else if (name.size() > 5 && name.substr(name.size() - 5) == ".orig") tail = name.substr(0, name.size() - 5);
  else return false;
  size_t mark = tail.rfind(".sitepatch-");
  if (mark == std::string_view::npos || mark < 2) return false;
  std::string_view tag = tail.substr(mark + 11);
  if (tag.empty()) return false;
  for (char c : tag)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
  return true;
}

Dir::Dir(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw Error(path + ": cannot open folder: " + std::strerror(errno));
}

Dir::~Dir() {
  if (fd_ >= 0) ::close(fd_);
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

AtomicFile::AtomicFile(std::string path, int mode)
    : path_(std::move(path)), base_(split(path_).second), dir_(split(path_).first) {
  // O_EXCL|O_NOFOLLOW at a random name: a link planted at the name is refused, and
  // nobody can plant at a name they cannot guess.
  for (int attempt = 0; fd_ < 0; ++attempt) {
    tmp_ = "." + base_ + ".sitepatch-" + random_name() + ".tmp";
    fd_ = ::openat(dir_.fd(), tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0 && (errno != EEXIST || attempt > 8))
      throw Error(dir_.path() + "/" + tmp_ + ": cannot create: " + std::strerror(errno));
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

void AtomicFile::commit_unsynced() {
  close_temp(false);
  replace();
}

}  // namespace sitepatch::util
