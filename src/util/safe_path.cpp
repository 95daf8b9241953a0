#include "sitepatch/util/safe_path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>

namespace sitepatch::util {
namespace {

std::string mode_text(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(m & 07777));
  return buf;
}

bool trusted_owner(uid_t uid) { return uid == 0 || uid == ::geteuid(); }

/// Writable by someone other than the owner: the group's write bit counts unless the
/// group is root's.
bool others_write(const struct stat& st) {
  return (st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != 0);
}

std::string owner_problem(const std::string& where, const struct stat& st) {
  return where + " belongs to uid " + std::to_string(st.st_uid) + ", another user";
}

std::string write_problem(const std::string& where, const struct stat& st) {
  return where + " is writable by " + ((st.st_mode & S_IWOTH) ? "other users" : "its group " + std::to_string(st.st_gid)) +
         " (mode " + mode_text(st.st_mode) + ")";
}

std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  void reset(int n) {
    if (fd >= 0) ::close(fd);
    fd = n;
  }
};

std::optional<std::string> walk(const std::string& given, bool create) {
  std::string path = given;
  if (path.empty() || path[0] != '/') {
    char cwd[PATH_MAX];
    if (!::getcwd(cwd, sizeof cwd)) return "cannot tell where " + given + " is: " + std::strerror(errno);
    path = std::string(cwd) + "/" + path;
  }
  std::deque<std::string> pending = components(path);
  std::deque<std::string> seen;  // the real folders walked, for `..` and messages
  Fd dir;
  dir.reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat st;
  if (dir.fd < 0 || ::fstat(dir.fd, &st) != 0) return std::string("cannot open /: ") + std::strerror(errno);
  if (!trusted_owner(st.st_uid)) return owner_problem("/", st);
  auto where = [&] {
    std::string w;
    for (auto& c : seen) w += "/" + c;
    return w.empty() ? std::string("/") : w;
  };
  int links = 0;
  struct stat cur = st;  // the folder `dir` is
  while (!pending.empty()) {
    std::string name = pending.front();
    pending.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      // Back up by reopening the walked prefix: every folder on it was already judged.
      if (!seen.empty()) seen.pop_back();
      dir.reset(::open(where().c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (dir.fd < 0 || ::fstat(dir.fd, &cur) != 0) return "cannot open " + where() + ": " + std::strerror(errno);
      continue;
    }
    // Whoever may write this folder may rename `name` away and put a link there,
    // unless the folder is sticky and the entry is the caller's or root's.
    bool sticky = cur.st_mode & S_ISVTX;
    if (others_write(cur) && !sticky) return write_problem(where(), cur);
    if (::fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return where() + "/" + name + ": " + std::strerror(errno);
      if (!create) return std::nullopt;  // judged by the folder it would be made in
      if (::mkdirat(dir.fd, name.c_str(), 0700) != 0 && errno != EEXIST)
        return "cannot create " + where() + "/" + name + ": " + std::strerror(errno);
      if (::fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return where() + "/" + name + ": " + std::strerror(errno);
    }
    std::string here = (seen.empty() ? "" : where()) + "/" + name;
    if (!trusted_owner(st.st_uid)) return owner_problem(here, st);
    if (S_ISLNK(st.st_mode)) {
      if (++links > 40) return here + ": too many levels of symbolic links";
      char buf[PATH_MAX + 1];
      ssize_t n = ::readlinkat(dir.fd, name.c_str(), buf, PATH_MAX);
      if (n <= 0) return here + ": cannot read the link: " + std::strerror(errno);
      std::string target(buf, size_t(n));
      auto parts = components(target);
      pending.insert(pending.begin(), parts.begin(), parts.end());
      if (target[0] == '/') {
        seen.clear();
        dir.reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (dir.fd < 0 || ::fstat(dir.fd, &cur) != 0) return std::string("cannot open /: ") + std::strerror(errno);
      }
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (!pending.empty()) return here + " is not a folder";
      return std::nullopt;  // the last name is a file: its folder was judged above
    }
    int next = ::openat(dir.fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return "cannot open " + here + ": " + std::strerror(errno);
    dir.reset(next);
    if (::fstat(dir.fd, &cur) != 0) return "cannot open " + here + ": " + std::strerror(errno);
    if (cur.st_ino != st.st_ino || cur.st_dev != st.st_dev) return here + " changed while it was checked";
    seen.push_back(name);
  }
  // The folder itself: anything another user could create in it is not ours to trust.
  if (others_write(cur)) return write_problem(where(), cur);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unsafe_path(const std::string& path) { return walk(path, false); }

std::optional<std::string> make_safe_folder(const std::string& path) { return walk(path, true); }

}  // namespace sitepatch::util
