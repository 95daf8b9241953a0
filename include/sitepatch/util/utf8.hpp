#pragma once
// UTF-8 validity, as Python and JSON need it: no overlong forms, no surrogates,
// nothing above U+10FFFF.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sitepatch::util {

/// Offset of the first byte of `s` that does not begin a valid UTF-8 sequence (or is a
/// sequence cut short), or nullopt when `s` is valid UTF-8.
std::optional<size_t> first_invalid_utf8(std::string_view s);

/// "0xE9".
std::string hex_byte(char c);

}  // namespace sitepatch::util
