#include "python/definitions.hpp"

namespace sitepatch::python {
namespace {

enum class Level { module, class_body, function_body };

// Collects definitions, entering the blocks of compound statements that define
// names at the level they appear at (if/elif/else, try/except/else/finally, with).
class Walker {
 public:
  Walker(std::string_view src, std::vector<Def>& out) : src_(src), out_(out) {}

  void block(TSNode container, const std::string& prefix, Level level) {
    for (TSNode s : ts::named_children(container)) statement(s, prefix, level);
  }

 private:
  void statement(TSNode s, const std::string& prefix, Level level) {
    std::string_view t = ts_node_type(s);
    if (t == "decorated_definition") {
      definition(ts::field(s, "definition"), s, prefix);
    } else if (t == "function_definition" || t == "class_definition") {
      definition(s, s, prefix);
    } else if (t == "expression_statement") {
      if (level == Level::function_body) return;
      for (TSNode c : ts::named_children(s))
        if (ts::is(c, "assignment")) assignment(c, s, prefix);
    } else if (t == "if_statement" || t == "try_statement" || t == "with_statement") {
      compound(s, prefix, level);
    }
  }

  void compound(TSNode s, const std::string& prefix, Level level) {
    for (TSNode c : ts::named_children(s)) {
      std::string_view t = ts_node_type(c);
      if (t == "block")
        block(c, prefix, level);
      else if (t == "elif_clause" || t == "else_clause" || t == "except_clause" ||
               t == "except_group_clause" || t == "finally_clause")
        compound(c, prefix, level);
    }
  }

  void definition(TSNode d, TSNode outer, const std::string& prefix) {
    if (ts_node_is_null(d)) return;
    TSNode name = ts::field(d, "name");
    if (ts_node_is_null(name)) return;
    bool is_class = ts::is(d, "class_definition");
    std::string q = qualify(prefix, ts::text(src_, name));
    out_.push_back({q, is_class ? recipe::TargetKind::class_ : recipe::TargetKind::function,
                    ts::line(d), d, outer, TSNode{}, TSNode{}});
    block(ts::field(d, "body"), q, is_class ? Level::class_body : Level::function_body);
  }

  // `x = 1`, `x: T = 1`, `x: T`, and each name of `x = y = 1` (value: the last right side).
  void assignment(TSNode a, TSNode stmt, const std::string& prefix) {
    std::vector<TSNode> chain{a};
    TSNode right = ts::field(a, "right");
    while (ts::is(right, "assignment")) {
      chain.push_back(right);
      right = ts::field(right, "right");
    }
    for (TSNode link : chain) {
      TSNode left = ts::field(link, "left");
      if (!ts::is(left, "identifier")) continue;
      out_.push_back({qualify(prefix, ts::text(src_, left)), recipe::TargetKind::variable,
                      ts::line(link), link, stmt, right, ts::field(link, "type")});
    }
  }

  static std::string qualify(const std::string& prefix, std::string_view name) {
    return prefix.empty() ? std::string(name) : prefix + "." + std::string(name);
  }

  std::string_view src_;
  std::vector<Def>& out_;
};

}  // namespace

Definitions::Definitions(TSNode root, std::string_view src) {
  Walker(src, defs_).block(root, "", Level::module);
  for (size_t i = 0; i < defs_.size(); ++i) {
    auto& v = by_name_[defs_[i].qualified];
    if (v.empty()) names_.push_back(defs_[i].qualified);
    v.push_back(i);
  }
}

const std::vector<size_t>* Definitions::find(std::string_view qualified) const {
  auto it = by_name_.find(std::string(qualified));
  return it == by_name_.end() ? nullptr : &it->second;
}


}  // namespace sitepatch::python
