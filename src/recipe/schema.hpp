#pragma once
// Private to src/recipe: reading YAML nodes against the schema while collecting every
// problem with its position, so one run reports them all.
#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::recipe::detail {

/// Every problem found so far; raise() throws them together, in file order.
class Problems {
 public:
  explicit Problems(std::string path) : path_(std::move(path)) {}
  void add(Mark mark, std::string message);
  bool empty() const { return list_.empty(); }
  [[noreturn]] void raise();

 private:
  std::string path_;
  std::vector<Diagnostic> list_;
};

/// yaml-cpp's 0-based mark as the 1-based one users read (1:1 when yaml-cpp has none).
Mark to_mark(const YAML::Mark& m);
Mark mark_of(const YAML::Node& n);
/// "a list", "a mapping", "nothing", or the scalar in backquotes (first line, shortened).
std::string describe(const YAML::Node& n);
/// `s` in backquotes, first line only, shortened, for messages.
std::string backquoted(std::string_view s);

/// One `key: value` of a mapping.
struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
  /// Where a problem with the value is reported: the value, or the key when it has none.
  Mark value_mark() const;
};

/// The entries of `map` whose keys are in `allowed`, in file order; reports unknown keys
/// (with a "did you mean", or the `elsewhere` note for a key that belongs elsewhere) and
/// duplicate keys.
std::vector<Entry> entries(const YAML::Node& map, const std::vector<std::string>& allowed,
                           Problems& problems,
                           const std::map<std::string, std::string>& elsewhere = {});
/// The first entry named `key`, or nullptr.
const Entry* find(const std::vector<Entry>& entries, std::string_view key);

/// A scalar value as YAML gives it; reports a missing, non-scalar or blank value.
std::optional<std::string> text(const Entry& e, Problems& problems);
/// An integer >= 1; reports anything else.
std::optional<int> positive_int(const Entry& e, Problems& problems);

/// True for `a`, `a.b`, `Class.method`: identifiers joined by dots.
bool is_dotted_name(std::string_view s);

/// Where the edit `item` starts for users: its `-`, when the mapping begins on that line.
Mark dash_mark(const YAML::Node& item, std::string_view text);

/// Reads the `number`th (1-based) edit; nullopt (problems reported) when unusable.
std::optional<Edit> read_edit(const YAML::Node& item, int number, Mark mark, Problems& problems);

}  // namespace sitepatch::recipe::detail
