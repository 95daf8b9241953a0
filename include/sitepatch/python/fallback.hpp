#pragma once
// A module-level name bound in more than one arm of a `try` or an `if`: the C function an
// import gives, and the library's own pure-Python definition beside it (`try: from zlib
// import crc32` / `except ImportError: def crc32(...)`, or `from ._native import escape`).
// explain --run offers that definition to dynamo in place of the C one
// (torch.compiler.substitute_in_graph). Pure: a text in, facts out.
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::python {

struct NameBindings {
  std::string name;
  std::vector<std::string> defs;     // each module-level `def name`, decorators included, dedented
  std::vector<std::string> imports;  // each `from M import n [as name]` binding it: "M:n", M absolute
  int last_line = 0;                 // the last line of the last statement binding it (0: none)
  /// The first line of the first module-level function or class defined wholly after
  /// `last_line`, at the module's top (not inside a try or an if): where new code that
  /// needs the name bound may follow; "" when none.
  std::string next_definition;
  bool next_is_class = false;
};

/// How module `module` (`package`: its file is an `__init__.py`) binds `name` at module
/// level, through the arms of `try` and `if` statements.
NameBindings module_bindings(std::string_view source, const std::string& name, const std::string& module,
                             bool package);

}  // namespace sitepatch::python
