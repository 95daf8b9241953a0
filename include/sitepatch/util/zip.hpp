#pragma once
// Reading members of a zip file (a wheel) with libzip.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

namespace sitepatch::util {

/// The members of the zip at `path` that `want` accepts, name (its raw bytes, as
/// list_zip gives it) -> bytes. The file is opened without following a final symlink and
/// must be a regular file (no FIFO). Each member is at most kMaxFileBytes, and all of them
/// together at most `max_total` as inflated (a zip bomb says small and inflates large).
/// An error names the file and what libzip said.
tl::expected<std::map<std::string, std::string>, std::string> read_zip(
    const std::string& path, const std::function<bool(const std::string&)>& want,
    size_t max_total = size_t(-1));

/// One member of a zip, as its central directory says.
struct ZipMember {
  std::string name;
  uint64_t size = 0;       // uncompressed
  uint32_t mode = 0;       // Unix mode from the external attributes (0 when none)
  bool dir = false;        // a name ending in '/'
};

/// The members of the zip at `path`, in the archive's order; opened as read_zip opens it.
tl::expected<std::vector<ZipMember>, std::string> list_zip(const std::string& path);

/// One member of a zip `write_zip` makes: new bytes, or the member `from` of the source
/// zip, copied compressed as it is (a wheel's 400 MB library is never inflated).
struct ZipEntry {
  std::string name;
  std::optional<std::string> data;
  std::string from;
  bool executable = false;  // mode 0755 instead of 0644
};

/// Writes `entries`, in their order, as a new zip at `out` (libzip writes a temporary
/// beside it and renames it over `out` only once it is whole). Byte-reproducible: every
/// member dated 1980-01-01 00:00, mode 0644 or 0755, no extra fields, new bytes deflated.
/// Throws sitepatch::Error naming the file.
void write_zip(const std::string& out, const std::string& source, const std::vector<ZipEntry>& entries);
}  // namespace sitepatch::util
