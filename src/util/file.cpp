#include "sitepatch/util/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

AtomicFile::AtomicFile(std::string path, int mode) : path_(std::move(path)) {
  size_t slash = path_.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash);
  std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  tmp_ = dir + "/." + base + ".sitepatch-" + std::to_string(::getpid()) + ".tmp";
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) throw Error(tmp_ + ": cannot create: " + std::strerror(errno));
  if (::fchmod(fd_, mode < 0 ? 0644 : mode) != 0) {
    // The destructor does not run for a throwing constructor: clean up here.
    int e = errno;
    ::close(fd_);
    ::unlink(tmp_.c_str());
    throw Error(tmp_ + ": cannot set mode: " + std::strerror(e));
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFile::write(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(tmp_ + ": write failed: " + std::strerror(errno));
    }
    data.remove_prefix(size_t(n));
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) throw Error(tmp_ + ": fsync failed: " + std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  if (::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw Error(path_ + ": cannot replace: " + std::strerror(errno));
  committed_ = true;
  size_t slash = path_.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace sitepatch::util
