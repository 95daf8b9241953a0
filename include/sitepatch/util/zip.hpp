#pragma once
// Reading members of a zip file (a wheel) with libzip.
#include <functional>
#include <map>
#include <string>

#include <tl/expected.hpp>

namespace sitepatch::util {

/// The members of the zip at `path` that `want` accepts, name -> bytes. The file is
/// opened without following a final symlink and must be a regular file (no FIFO). An
/// error names the file and what libzip said.
tl::expected<std::map<std::string, std::string>, std::string> read_zip(
    const std::string& path, const std::function<bool(const std::string&)>& want);

}  // namespace sitepatch::util
