#include "sitepatch/util/temp_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

}  // namespace

std::string temp_root() {
  const char* tmp = std::getenv("TMPDIR");
  std::string root = tmp && *tmp ? tmp : "/tmp";
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

std::string make_temp_folder(const std::string& kind) {
  std::string root = temp_root();
  std::string prefix = "sitepatch-" + kind + "-";
  // Only where no other user can rename what we remove under us (a TMPDIR they own would
  // let them swap a folder for a link mid-removal).
  if (!unsafe_path(root)) reclaim(root, prefix);
  std::string pattern = root + "/" + prefix + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw Error("cannot make a temporary folder in " + root + ": " + std::strerror(errno));
  return pattern;
}

}  // namespace sitepatch::util
