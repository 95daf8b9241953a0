#pragma once
// Private to src/audit: what an `if` tells before anything runs. The audit reads code as
// it runs on the hosts this tool serves (Linux: sys.platform "linux", os.name "posix",
// platform.system() "Linux"), so an arm only Windows or macOS runs is not read; and a
// block under `if TYPE_CHECKING:` is read by type checkers only: its imports may name
// what annotations mean, its assignments (`FileLock = SoftFileLock`) never run.
#include <tree_sitter/api.h>

#include <string_view>

namespace sitepatch::audit::detail {

enum class Truth {
  unknown,
  yes,                // true on Linux
  no,                 // false on Linux
  type_checking,      // `TYPE_CHECKING`: false when the code runs, true for a type checker
  not_type_checking,  // `not TYPE_CHECKING`
};

/// What `condition` (an if's or elif's) is on a Linux host, from `src`, the text its
/// node positions are in.
Truth static_truth(std::string_view src, TSNode condition);

}  // namespace sitepatch::audit::detail
