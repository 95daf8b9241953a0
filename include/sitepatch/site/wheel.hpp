#pragma once
// A wheel's formats (PEP 427, PEP 491, PEP 440's local versions), pure: its file name,
// which member installs as which site-packages file, its METADATA's version, its RECORD
// written back as pip reads it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/site/distribution.hpp"

namespace sitepatch::site {

/// `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`.
struct WheelName {
  std::string name, version, build, python, abi, platform;
  /// The file name these parts make.
  std::string file() const;
};
/// nullopt when `file` (a base name) is not a wheel's name.
std::optional<WheelName> parse_wheel_name(std::string_view file);

/// The site-packages path a member installs as: itself, or what follows
/// `<name>.data/purelib/` or `.data/platlib/`; "" for other `.data` schemes (scripts,
/// headers, data), which install elsewhere.
std::string installed_rel(std::string_view member);

/// `version` with a local label part added: 1.2.3 -> 1.2.3+LABEL, 1.2.3+cu121 ->
/// 1.2.3+cu121.LABEL.
std::string with_local_label(std::string_view version, std::string_view label);

/// METADATA with its Version header (the first, in the headers) set to `version`; the
/// rest byte for byte. Throws sitepatch::Error when it has none.
std::string with_metadata_version(std::string_view metadata, std::string_view version);

/// RECORD text, one row a line, fields quoted as Python's csv module quotes them.
std::string format_record(const std::vector<RecordEntry>& rows);

/// The suffix an extension module's file name carries (".cpython-311-x86_64-linux-gnu.so",
/// ".abi3.so", ".so", ".pyd"), or "" when `member` is none.
std::string extension_suffix(std::string_view member);

}  // namespace sitepatch::site
