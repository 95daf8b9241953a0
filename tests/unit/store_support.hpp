#pragma once
// Helpers for the store's tests: a fresh temp folder per test, and plain `git`.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "sitepatch/util/process.hpp"

namespace store_test {

/// A fresh folder made by mkdtemp, removed with everything in it at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "sitepatch-store-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& rel) const { return path + "/" + rel; }
};

/// Runs `git --git-dir <repo> args...`; returns stdout, throws on a non-zero exit.
inline std::string git(const std::string& repo, std::initializer_list<std::string> args) {
  std::vector<std::string> argv{"git", "--git-dir", repo};
  argv.insert(argv.end(), args);
  auto r = sitepatch::util::run(argv);
  if (r.status != 0) throw std::runtime_error("git failed: " + r.err);
  return r.out;
}

inline void write_file(const std::string& path, const std::string& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << data;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace store_test
