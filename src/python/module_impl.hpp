#pragma once
// Module's private state, shared by module.cpp (parse, queries) and apply.cpp.
#include <memory>
#include <string>
#include <string_view>

#include "python/definitions.hpp"
#include "python/encoding.hpp"
#include "python/tree.hpp"
#include "sitepatch/python/module.hpp"

namespace sitepatch::python {

struct Module::Impl {
  std::string source;        // the bytes as given (in the module's own encoding)
  std::string decoded;       // the source as UTF-8 with LF ends, when that differs
  encoding::Codec codec;     // how `decoded` came from `source`, and goes back
  std::string name;          // the file, for messages ("" when unknown)
  size_t bom = 0;  // 3 when the source starts with a UTF-8 BOM; the tree is of what follows
  std::unique_ptr<ts::Tree> tree;
  std::unique_ptr<Definitions> defs;

  /// The UTF-8 source, BOM included: what edits splice into.
  std::string_view utf8() const { return codec.identity() ? source : decoded; }
  /// The UTF-8 source after its BOM: every offset and tree position refers to this.
  std::string_view text() const { return utf8().substr(bom); }
  /// Decodes `source` into `decoded`; throws Error naming the file and the bad byte.
  void decode();
};

}  // namespace sitepatch::python
