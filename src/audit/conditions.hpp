#pragma once
// Private to src/audit: what an `if` tells before anything runs. The audit reads code as
// it runs on the hosts this tool serves (Linux: sys.platform "linux", os.name "posix",
// platform.system() "Linux"), so an arm only Windows or macOS runs is not read; and a
// block under `if TYPE_CHECKING:` is read by type checkers only: its imports may name
// what annotations mean, its assignments (`FileLock = SoftFileLock`) never run.
#include <tree_sitter/api.h>

#include <map>
#include <set>
#include <string>
#include <string_view>

namespace sitepatch::audit::detail {

enum class Truth {
  unknown,
  yes,                // true on Linux
  no,                 // false on Linux
  type_checking,      // `TYPE_CHECKING`: false when the code runs, true for a type checker
  not_type_checking,  // `not TYPE_CHECKING`
};

/// Names a module or a function binds to what the platform is, from their assignments:
/// `_IS_WINDOWS = sys.platform == "win32"` (a truth), `system = sys.platform` (a value).
/// A name assigned twice to different things is neither.
struct KnownNames {
  std::map<std::string, Truth> truths;
  std::map<std::string, std::string> values;
  std::set<std::string> spoiled;
  const KnownNames* outer = nullptr;  // the module's, around a function's: read where these say nothing

  /// What `name` is known to be here or, unless bound here, around.
  const Truth* truth(const std::string& name) const;
  const std::string* value(const std::string& name) const;
};

/// What `condition` (an if's, elif's or ternary's) is on a Linux host, from `src`, the
/// text its node positions are in; `names` are what the scope's names are known to be.
Truth static_truth(std::string_view src, TSNode condition, const KnownNames* names = nullptr);

/// Records what `name = value` tells of the platform in `into` (read with `known`, the
/// names around, too); a name given anything else is spoiled.
void learn(std::string_view src, const std::string& name, TSNode value, const KnownNames* known,
           KnownNames& into);

}  // namespace sitepatch::audit::detail
