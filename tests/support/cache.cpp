#include "support/cache.hpp"

#include <stdio.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"

namespace testsupport {

namespace fs = std::filesystem;

std::string cache_root() {
  if (const char* set = std::getenv("SITEPATCH_TEST_CACHE"); set && *set) return set;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  std::string base = xdg && *xdg ? xdg : std::string(std::getenv("HOME")) + "/.cache";
  return base + "/sitepatch-tests";
}

std::string cached_folder(const std::string& kind, const std::string& key,
                          const std::function<void(const std::string&)>& make) {
  std::string parent = cache_root() + "/" + kind;
  std::string done = parent + "/" + key;
  if (fs::is_directory(done)) return done;
  fs::create_directories(parent);
  // Made beside where it goes (the same file system, so the rename is atomic).
  std::string tmpl = parent + "/.making-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp in " + parent + ": " + std::strerror(errno));
  try {
    make(tmpl);
  } catch (...) {
    fs::remove_all(tmpl);
    throw;
  }
  // Another process may have published the same key meanwhile: its folder stays.
  if (::rename(tmpl.c_str(), done.c_str()) != 0) {
    int err = errno;
    fs::remove_all(tmpl);
    if (!fs::is_directory(done)) throw std::runtime_error("cannot publish " + done + ": " + std::strerror(err));
  }
  return done;
}

void copy_tree(const std::string& from, const std::string& to) {
  auto r = sitepatch::util::run({"cp", "-a", from + "/.", to + "/"});
  if (r.status != 0) throw std::runtime_error("cp -a " + from + " " + to + ": " + r.err);
}

}  // namespace testsupport
