#pragma once
// Private to src/recipe: YAML text -> the first document's nodes, guarded against
// yaml-cpp 0.7's endless LoadAll on a stray token (upstream issue 1040).
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string_view>

namespace sitepatch::recipe::detail {

/// The first YAML document of `text`, and where a second one starts (if any).
struct Loaded {
  YAML::Node root;
  std::optional<YAML::Mark> second;  // start of a second document
};

/// Loads `text`; throws YAML::Exception (with its mark) on a syntax error, including a
/// token no document can start with (`,` `]` `}` ...), which yaml-cpp 0.7 would turn into
/// endless empty documents.
Loaded load_first_document(std::string_view text);

}  // namespace sitepatch::recipe::detail
