#pragma once
// What the audit's two YAML files (rules, ignore) share: file:line:col problems reported
// all together, and a top level that is one mapping with one list key.
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::audit::detail {

/// yaml-cpp's 0-based mark as the 1-based one users read (1:1 when it has none).
recipe::Mark mark_of(const YAML::Node& n);

/// Every problem of one file; raise_if_any() throws them in file order, exit 2,
/// headed "invalid <kind> file".
class FileProblems {
 public:
  FileProblems(std::string path, std::string kind) : path_(std::move(path)), kind_(std::move(kind)) {}
  void add(recipe::Mark m, std::string message) { list_.push_back({path_, m, std::move(message)}); }
  void raise_if_any() const;
  /// Every problem as "file:line:col: message", in line order.
  std::vector<std::string> lines() const;

 private:
  std::string path_, kind_;
  std::vector<recipe::Diagnostic> list_;
};

/// The list under `key` of a file whose top level must be `{key: [...]}`; `what` names
/// the file in messages ("a rules file"). Unknown top-level keys are added to `problems`;
/// a YAML error or another top level raises at once.
YAML::Node load_list_file(std::string_view text, const std::string& key, const std::string& what,
                          FileProblems& problems);

}  // namespace sitepatch::audit::detail
