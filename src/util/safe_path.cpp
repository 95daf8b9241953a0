#include "sitepatch/util/safe_path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
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

// POSIX ACLs as the kernel stores them (linux/posix_acl_xattr.h): a version word, then
// entries of tag, permission and id, little-endian. Read here rather than through
// libacl: the check needs only who may write, and libacl is one more library to ship.
constexpr uint16_t kAclUser = 0x02, kAclGroupObj = 0x04, kAclGroup = 0x08, kAclMask = 0x10;
constexpr uint16_t kAclWrite = 0x02;

uint32_t little(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/// Who an ACL lets write besides root, the caller and a root group: "uid N" or "group N",
/// or empty. Entries the mask takes write from do not count, as the kernel ignores them.
std::string acl_writer(const std::string& path, const char* attribute, const struct stat& st) {
  unsigned char buf[4096];
  ssize_t n = ::lgetxattr(path.c_str(), attribute, buf, sizeof buf);
  if (n < 0) return errno == ERANGE ? "an ACL too long to read" : "";
  bool mask_writes = true;
  for (ssize_t at = 4; at + 8 <= n; at += 8)
    if (little(buf + at, 2) == kAclMask) mask_writes = little(buf + at + 2, 2) & kAclWrite;
  if (!mask_writes) return "";
  for (ssize_t at = 4; at + 8 <= n; at += 8) {
    uint32_t tag = little(buf + at, 2), perm = little(buf + at + 2, 2), id = little(buf + at + 4, 4);
    if (!(perm & kAclWrite)) continue;
    if (tag == kAclUser && id != 0 && id != ::geteuid()) return "uid " + std::to_string(id);
    if (tag == kAclGroup && id != 0) return "group " + std::to_string(id);
    if (tag == kAclGroupObj && st.st_gid != 0) return "group " + std::to_string(st.st_gid);
  }
  return "";
}

/// Why `where`, whose mode lets no one else write it, may be written by another user all
/// the same: its access ACL, or, for the folder things are made in (`makes_in`), the
/// default ACL every file made there inherits.
std::optional<std::string> acl_problem(const std::string& where, const struct stat& st, bool makes_in) {
  // With an access ACL the group bits are its mask: without write there, no entry writes.
  if (st.st_mode & S_IWGRP) {
    std::string who = acl_writer(where, "system.posix_acl_access", st);
    if (!who.empty()) return where + " is writable by " + who + " through a POSIX ACL (see getfacl " + where + ")";
  }
  if (makes_in && S_ISDIR(st.st_mode)) {
    std::string who = acl_writer(where, "system.posix_acl_default", st);
    if (!who.empty())
      return where + " lets " + who + " write what is made in it, through a default POSIX ACL (see getfacl " +
             where + ")";
  }
  return std::nullopt;
}

/// Another user may change this entry: by its mode, or by an ACL.
std::optional<std::string> writable_by_others(const std::string& where, const struct stat& st, bool makes_in) {
  if (others_write(st)) return write_problem(where, st);
  return acl_problem(where, st, makes_in);
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
    if (!(cur.st_mode & S_ISVTX))
      if (auto why = writable_by_others(where(), cur, false)) return why;
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
      // The last name is a file: whoever may write it chooses what it says (a 0666 .pth,
      // a 0777 interpreter), whatever its folder is.
      return writable_by_others(here, st, false);
    }
    int next = ::openat(dir.fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return "cannot open " + here + ": " + std::strerror(errno);
    dir.reset(next);
    if (::fstat(dir.fd, &cur) != 0) return "cannot open " + here + ": " + std::strerror(errno);
    if (cur.st_ino != st.st_ino || cur.st_dev != st.st_dev) return here + " changed while it was checked";
    seen.push_back(name);
  }
  // The folder itself: anything another user could create in it is not ours to trust.
  return writable_by_others(where(), cur, true);
}

}  // namespace

std::optional<std::string> unsafe_path(const std::string& path) { return walk(path, false); }

std::optional<std::string> make_safe_folder(const std::string& path) { return walk(path, true); }

}  // namespace sitepatch::util
