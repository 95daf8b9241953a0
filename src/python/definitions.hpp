#pragma once
// Every function, class and module/class-level variable of a parsed module, with the
// nodes the edits need, and lookup by qualified name.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "python/tree.hpp"
#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::python {

/// One definition and its nodes in the tree.
struct Def {
  std::string qualified;
  recipe::TargetKind kind;
  int line;      // 1-based line of `def`/`class`/the assignment
  TSNode node;   // function_definition, class_definition, or assignment
  TSNode outer;  // decorated_definition (or the definition), or the expression_statement
  TSNode value;  // variable: right-hand side (null for `x: T`)
  TSNode type;   // variable: annotation (may be null)
};

/// Definitions in source order with an index by qualified name.
class Definitions {
 public:
  Definitions(TSNode root, std::string_view src);

  const std::vector<Def>& all() const { return defs_; }
  /// Indexes into all() of every definition named `qualified` (any kind), in source order.
  const std::vector<size_t>* find(std::string_view qualified) const;
  /// Each qualified name once, in source order.
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<Def> defs_;
  std::unordered_map<std::string, std::vector<size_t>> by_name_;
  std::vector<std::string> names_;
};


}  // namespace sitepatch::python
