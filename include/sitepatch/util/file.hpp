#pragma once
// Local file helpers. Utility tier: returns tl::expected for the failures callers handle.
#include <string>
#include <tl/expected.hpp>

namespace sitepatch::util {

/// Whole file as bytes, or an error message naming the path.
tl::expected<std::string, std::string> read_file(const std::string& path);

/// A file written to a temp name beside `path` and renamed over it only in commit();
/// the destructor removes an uncommitted temp. The rename breaks hard links.
class AtomicFile {
 public:
  /// `mode` is applied to the temp before the rename (-1: 0644).
  explicit AtomicFile(std::string path, int mode = -1);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view data);
  /// fsync, rename over the target, fsync the folder. Throws sitepatch::Error.
  void commit();

 private:
  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace sitepatch::util
