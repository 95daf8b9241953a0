#pragma once
// Files a command writes where the user said (`capture -o`, `explain --recipe`, `audit
// --callgraph`): one rule for all of them, since root writes them on servers others log
// into. Private to src/cli.
#include <string>
#include <string_view>

namespace sitepatch::cli {

/// Throws (exit 2) when a user other than the caller and root could change where `path`
/// leads (util::unsafe_path on its absolute path): "OPTION PATH: why; write the WHAT into
/// a folder only you can change". Nothing happens for "" and "-".
void check_output_file(const std::string& path, const std::string& option, const std::string& what);

/// check_output_file, then `text` written through the folder it checked: a temp made
/// O_EXCL|O_NOFOLLOW in that folder's descriptor, renamed over `path` (or, with
/// `replace` false, linked there only when nothing is). Throws sitepatch::Error.
void write_output_file(const std::string& path, std::string_view text, const std::string& option,
                       const std::string& what, bool replace = true);

}  // namespace sitepatch::cli
