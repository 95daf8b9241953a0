#pragma once
// A library's own custom-op seam, as the source shows it: decorators written as calls that
// name a custom op (`@register_custom_op("flashinfer::rmsnorm", mutates_args=("out",))`),
// and the decorator factories that give back what they decorate unchanged (the
// torch.library calls stubbed out for their overhead). Made real, such a seam turns every
// op the library declares into one node to dynamo, with the schema and fake the library
// already wrote. Pure: a text in, facts out.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::python {

/// A decorator call whose first argument is a string naming a custom op ("ns::op").
struct OpDecorator {
  std::string callee;    // as written: "register_custom_op"
  std::string op;        // the first argument as written: "\"flashinfer::rmsnorm\"", "f\"flashinfer::{fname}\""
  std::string function;  // the decorated function's name
  int first = 0, last = 0;  // the decorated definition's lines, decorators included
};

/// A module-level function that returns what it decorates unchanged: every return gives
/// `lambda x: x`, a nested `def inner(f): return f`, or a parameter other than the first.
struct SeamFactory {
  std::string name;
  int defs = 0;                  // module-level definitions of this name (if/else branches)
  std::vector<int> occurrences;  // 1-based, among `defs`: those that are identities
  std::vector<std::string> params;  // every parameter's name, in order (`/` and `*` dropped)
  std::string function_param;       // the parameter a direct call passes the function in ("" if none)
};

struct ModuleSeams {
  std::vector<OpDecorator> ops;
  std::map<std::string, SeamFactory> factories;     // identity factories, by name
  std::map<std::string, std::string> from_imports;  // a top-level `from M import n as k`: "k" -> "M:n", M absolute
  /// The op decorator on the definition holding `line`; nullptr when none.
  const OpDecorator* op_at(int line) const;
};

/// The seams of `source`, the module `module` (`package`: its file is an `__init__.py`,
/// which relative imports resolve against).
ModuleSeams module_seams(std::string_view source, const std::string& module, bool package);

}  // namespace sitepatch::python
