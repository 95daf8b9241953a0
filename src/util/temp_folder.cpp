#include "sitepatch/util/temp_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <climits>
#include <cstring>
#include <filesystem>
#include <vector>

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/safe_path.hpp"

namespace sitepatch::util {
namespace {

// A folder `prefix`<pid>-XXXXXX of ours whose maker is gone: a plain folder (no link),
// owned by us, private, its pid no process's.
bool left_by_dead(int dir_fd, const std::string& name, const std::string& prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  char* end = nullptr;
  long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
  if (pid <= 0 || end == name.c_str() + prefix.size() || *end != '-') return false;
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077)) return false;
  return ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

void reclaim(const std::string& root, const std::string& prefix) {
  DIR* d = ::opendir(root.c_str());
  if (!d) return;
  std::vector<std::string> gone;
  while (struct dirent* e = ::readdir(d))
    if (left_by_dead(::dirfd(d), e->d_name, prefix)) gone.push_back(e->d_name);
  ::closedir(d);
  // Inside a private folder of ours nobody else can make or swap a name: removing it
  // follows no one's link.
  for (auto& name : gone) {
    std::error_code ec;
    std::filesystem::remove_all(root + "/" + name, ec);
  }
}

/// Whether the leftovers in `root` may be removed: nobody else can rename what is
/// removed under us. A folder only we (or root) can change; or a sticky folder such as
/// /tmp, whose entries only their owner may rename, where left_by_dead then takes only
/// our own private folders.
bool may_reclaim_in(const std::string& root) {
  if (!unsafe_path(root)) return true;
  char real[PATH_MAX];
  if (!::realpath(root.c_str(), real)) return false;
  struct stat st;
  if (::lstat(real, &st) != 0 || !S_ISDIR(st.st_mode) || !(st.st_mode & S_ISVTX)) return false;
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) return false;
  std::string parent = std::filesystem::path(real).parent_path().string();
  return !unsafe_path(parent);
}

std::string make_folder_in(const std::string& root, const std::string& kind) {
  std::string prefix = "sitepatch-" + kind + "-";
  if (may_reclaim_in(root)) reclaim(root, prefix);
  std::string pattern = root + "/" + prefix + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw Error("cannot make a temporary folder in " + root + ": " + std::strerror(errno));
  return pattern;
}

}  // namespace

std::string temp_root() {
  const char* tmp = std::getenv("TMPDIR");
  std::string root = tmp && *tmp ? tmp : "/tmp";
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

std::string make_temp_folder(const std::string& kind) { return make_folder_in(temp_root(), kind); }

std::string cache_root() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return xdg;
  const char* home = std::getenv("HOME");
  if (home && *home == '/') return std::string(home) + "/.cache";
  struct passwd* pw = ::getpwuid(::geteuid());
  if (pw && pw->pw_dir && *pw->pw_dir == '/') return std::string(pw->pw_dir) + "/.cache";
  throw Error("no cache folder for a command's run files: set XDG_CACHE_HOME to a folder only you can change");
}

std::string make_run_folder() {
  std::string root = cache_root() + "/sitepatch/run";
  if (auto why = make_safe_folder(root))
    throw Error("refusing to run the command with its files in " + root + ": " + *why +
                    "; set XDG_CACHE_HOME to a folder only you can change",
                Exit::failed);
  return make_folder_in(root, "run");
}

}  // namespace sitepatch::util
