#pragma once
// What the root-safety tests share: files handed to another user (uid 65534, `nobody`),
// and folders anyone may make entries in, as /tmp is.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace e2e {

constexpr uid_t kOther = 65534;

/// Hands `path` (and all below it) to `uid`, as if that user had made it.
inline void give(const std::string& path, uid_t uid = kOther) {
  namespace fs = std::filesystem;
  REQUIRE(::lchown(path.c_str(), uid, uid) == 0);
  if (fs::is_directory(fs::symlink_status(path)))
    for (auto& e : fs::recursive_directory_iterator(path)) REQUIRE(::lchown(e.path().c_str(), uid, uid) == 0);
}

/// A folder anyone may make entries in, as /tmp is.
inline std::string shared_folder(const std::string& path) {
  std::filesystem::create_directories(path);
  REQUIRE(::chmod(path.c_str(), 01777) == 0);
  return path;
}

}  // namespace e2e
