#pragma once
// What zip.cpp (reading) and zip_write.cpp share: a zip opened for reading the one way
// sitepatch opens any file it is given, and libzip's error codes in words. Private to util.
#include <zip.h>

#include <memory>
#include <string>

#include <tl/expected.hpp>

namespace sitepatch::util::detail {

using ZipPtr = std::unique_ptr<zip_t, decltype(&zip_discard)>;

/// The zip at `path`, opened without following a final symlink; a regular file only (no
/// FIFO). The error names the file and what libzip said.
tl::expected<ZipPtr, std::string> open_zip(const std::string& path);

/// A libzip error code in words.
std::string zip_code_text(int code);

}  // namespace sitepatch::util::detail
