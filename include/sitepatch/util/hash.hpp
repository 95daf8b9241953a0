#pragma once
#include <string>
#include <string_view>

namespace sitepatch::util {

/// SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

/// SHA-256 of `data` as pip's RECORD writes it: urlsafe base64, no padding.
std::string sha256_record(std::string_view data);

/// SHA-256 of the file at `path` as 64 hex digits, read in pieces (a wheel may be far
/// larger than any file read whole); the error names the file.
std::string sha256_file_hex(const std::string& path);

}  // namespace sitepatch::util
