#pragma once
// A module's source encoding (PEP 263): found by its UTF-8 BOM or its coding line,
// decoded to the UTF-8 text tree-sitter parses, encoded back for writing. Line ends
// of a CR-only file (which Python accepts) become LF in the text and CR again on the
// way back. No I/O.
#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace sitepatch::python::encoding {

struct Codec {
  std::string name = "utf-8";  // as messages name it: "utf-8", "iso-8859-1", "cp1252"
  std::string iconv;           // iconv's name for it; empty for UTF-8 (no conversion)
  bool cr_only = false;        // lines end with a lone CR
  /// Whether the text is the bytes themselves.
  bool identity() const { return iconv.empty() && !cr_only; }
};

/// The encoding `bytes` declare: a UTF-8 BOM, else a coding line on line 1 or 2 (line 2
/// only after a blank or comment line), else UTF-8; an error for an unknown encoding
/// or a BOM with another coding line.
tl::expected<Codec, std::string> detect(std::string_view bytes);

/// `bytes` as UTF-8 text; an error "line L, byte B (offset N): ..." for a byte that
/// is not valid in `codec`.
tl::expected<std::string, std::string> decode(std::string_view bytes, const Codec& codec);

/// UTF-8 `text` as bytes in `codec`; an error naming the first character it cannot hold.
tl::expected<std::string, std::string> encode(std::string_view text, const Codec& codec);

/// The first character of UTF-8 `text` that `codec` cannot hold, as "`€` (U+20AC)",
/// or "" when it can hold them all.
std::string unencodable(std::string_view text, const Codec& codec);

}  // namespace sitepatch::python::encoding
