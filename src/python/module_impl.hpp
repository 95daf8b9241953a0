#pragma once
// Module's private state, shared by module.cpp (parse, queries) and apply.cpp.
#include <memory>
#include <string>
#include <string_view>

#include "python/definitions.hpp"
#include "python/tree.hpp"
#include "sitepatch/python/module.hpp"

namespace sitepatch::python {

struct Module::Impl {
  std::string source;
  size_t bom = 0;  // 3 when the source starts with a UTF-8 BOM; the tree is of what follows
  std::unique_ptr<ts::Tree> tree;
  std::unique_ptr<Definitions> defs;

  /// The source after its BOM: every offset and tree position refers to this.
  std::string_view text() const { return std::string_view(source).substr(bom); }
};

}  // namespace sitepatch::python
