#pragma once
// ensure-import: which names an import statement binds, which the module binds
// already, and where a new import line goes.
#include <string>
#include <string_view>
#include <vector>

#include "python/plan.hpp"

namespace sitepatch::python {

/// One name an import binds: `import a.b` binds "a" (module "a.b", plain);
/// `import a.b as c` binds "c"; `from m import n as k` binds "k" to "m:n".
struct Binding {
  std::string bound;
  std::string what;
  bool plain = false;  // `import a.b` without `as`
  std::string alias;   // as written after `as`, or ""
  std::string name;    // for `from`: the imported name; for `import`: the module
  int line = 0;
};

/// A parsed `ensure-import` statement.
struct ImportRequest {
  bool from = false;
  bool future = false;
  std::string module;  // for `from`
  std::string text;    // the statement as given, trimmed, LF
  std::vector<Binding> bindings;
};

/// Parses `statement`; false with `error` set when it is not one import statement.
bool parse_import(std::string_view statement, ImportRequest& out, std::string& error);

/// `want` is bound by one of `have`.
bool bound_by(const Binding& want, const std::vector<Binding>& have);

/// The statement binding just `names` of `req` ("from m import a, b as c").
std::string render_import(const ImportRequest& req, const std::vector<Binding>& names);

/// The module's top-level imports and where new ones go.
struct ImportSite {
  std::vector<Binding> bound;  // what the module's top-level import statements bind
  size_t at = 0;               // after the leading run of docstring/imports
  int at_line = 1;
  size_t future_at = 0;        // after the docstring and `from __future__` imports
  int future_line = 1;
};
ImportSite import_site(const Context& cx);

}  // namespace sitepatch::python
