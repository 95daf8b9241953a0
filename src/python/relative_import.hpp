#pragma once
// `from .x import n`'s module made absolute against the importing module (op_seam.cpp and
// fallback.cpp read where a name comes from).
#include <string>
#include <string_view>

#include "python/tree.hpp"

namespace sitepatch::python {

/// The absolute module of `from`, an import_from_statement's module_name (a
/// relative_import or a dotted name) in module `module` (`package`: its file is an
/// `__init__.py`); "" when its dots climb above the top package.
std::string absolute_from(std::string_view src, TSNode from, const std::string& module, bool package);

}  // namespace sitepatch::python
