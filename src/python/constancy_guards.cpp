// What dynamo guards while tracing (constancy_guards.hpp): a tensor's metadata is
// specialised on, with a guard that recompiles when it changes, so a function given only
// such values (and constants) may have its result held as a constant.
#include "python/constancy_guards.hpp"

#include <algorithm>
#include <set>

namespace sitepatch::python::guards {

namespace {

using ts::field;
using ts::is;

// A tensor's metadata dynamo specialises on (a guard recompiles when it changes).
const std::set<std::string> kGuardedAttributes = {"device", "dtype",   "is_cuda",   "is_cpu",      "is_meta",
                                                  "ndim",   "layout",  "is_sparse", "is_quantized", "is_mps"};
const std::set<std::string> kGuardedMethods = {"dim", "size", "is_floating_point", "is_complex", "element_size",
                                               "get_device", "is_contiguous"};

class Guards {
 public:
  Guards(std::string_view src, const IsConstant& constant, std::vector<std::string>* keys = nullptr)
      : src_(src), constant_(constant), keys_(keys) {}

  // Whether `n` is what dynamo guards on and holds as a constant while tracing: a
  // tensor's metadata (specialised on, with a guard that recompiles when it changes),
  // or a comparison of such values; `fn` is the function whose locals may hold one.
  bool guarded(TSNode n, TSNode fn, int depth) const {
    if (ts_node_is_null(n) || depth > 4) return false;
    std::string_view t = ts_node_type(n);
    if (t == "parenthesized_expression" || t == "not_operator")
      return guarded(ts_node_named_child(n, 0), fn, depth + 1);
    if (t == "attribute") {
      std::string attr = text(field(n, "attribute"));
      if (kGuardedAttributes.count(attr)) return rests_on(attr);
      TSNode obj = field(n, "object");
      return (attr == "type" || attr == "index") && is(obj, "attribute") &&
             text(field(obj, "attribute")) == "device" && rests_on("device." + attr);
    }
    if (t == "subscript") {
      TSNode value = field(n, "value");
      return is(value, "attribute") && text(field(value, "attribute")) == "shape" && rests_on("shape[i]");
    }
    if (t == "call") {
      TSNode callee = field(n, "function");
      TSNode args = field(n, "arguments");
      if (is(callee, "attribute")) {
        std::string method = text(field(callee, "attribute"));
        return kGuardedMethods.count(method) > 0 && rests_on(method + "()");
      }
      if (is(callee, "identifier") && (text(callee) == "str" || text(callee) == "int") && is(args, "argument_list") &&
          ts_node_named_child_count(args) == 1)
        return guarded(ts_node_named_child(args, 0), fn, depth + 1);
      return false;
    }
    if (t == "comparison_operator" || t == "boolean_operator" || t == "conditional_expression") {
      bool any = false;
      for (TSNode c : ts::named_children(n)) {
        if (is(c, "comment")) continue;
        bool g = guarded(c, fn, depth + 1);
        if (!g && !constant(c)) return false;
        any |= g;
      }
      return any;
    }
    if (t == "identifier" && !ts_node_is_null(fn)) {
      TSNode value = local_value(fn, text(n));
      if (!ts_node_is_null(value)) return guarded(value, fn, depth + 1);
      return unpacked_shape(fn, text(n)) && rests_on("shape unpacked");
    }
    return false;
  }

  // Whether `name` is bound in `fn` only by unpacking a tensor's shape (`E, N, _ =
  // w.shape`, `b, s = x.size()`): each item is a dimension, which dynamo guards.
  bool unpacked_shape(TSNode fn, const std::string& name) const {
    int bound = 0, by_shape = 0;
    std::vector<TSNode> todo = {field(fn, "body")};
    while (!todo.empty()) {
      TSNode c = todo.back();
      todo.pop_back();
      if (ts_node_is_null(c) || is(c, "function_definition") || is(c, "lambda") || is(c, "class_definition")) continue;
      if (is(c, "assignment")) {
        TSNode left = field(c, "left");
        if (is(left, "identifier") && text(left) == name) ++bound;
        if (is(left, "pattern_list") || is(left, "tuple_pattern")) {
          bool here = false;
          for (TSNode item : ts::named_children(left)) here |= is(item, "identifier") && text(item) == name;
          if (here) {
            ++bound;
            TSNode right = field(c, "right");
            bool shape = (is(right, "attribute") && text(field(right, "attribute")) == "shape") ||
                         (is(right, "call") && is(field(right, "function"), "attribute") &&
                          text(field(field(right, "function"), "attribute")) == "size");
            by_shape += shape;
          }
        }
      }
      push_children(todo, c);
    }
    return bound > 0 && bound == by_shape;
  }

  // The names `fn`'s body binds: assignment targets, for and with targets, walrus.
  std::vector<std::string> locals_of(TSNode fn) const {
    std::set<std::string> names;
    std::vector<TSNode> todo = {field(fn, "body")};
    auto bind = [&](TSNode target) {
      std::vector<TSNode> parts = {target};
      while (!parts.empty()) {
        TSNode p = parts.back();
        parts.pop_back();
        if (ts_node_is_null(p)) continue;
        if (is(p, "identifier")) names.insert(text(p));
        else if (is(p, "pattern_list") || is(p, "tuple_pattern") || is(p, "list_pattern") || is(p, "as_pattern_target"))
          push_children(parts, p);
      }
    };
    while (!todo.empty()) {
      TSNode c = todo.back();
      todo.pop_back();
      if (ts_node_is_null(c) || is(c, "function_definition") || is(c, "lambda") || is(c, "class_definition")) continue;
      if (is(c, "assignment") || is(c, "augmented_assignment")) bind(field(c, "left"));
      else if (is(c, "for_statement")) bind(field(c, "left"));
      else if (is(c, "named_expression")) bind(field(c, "name"));
      else if (is(c, "as_pattern")) bind(field(c, "alias"));
      push_children(todo, c);
    }
    return {names.begin(), names.end()};
  }

  // The value of the one assignment of `name` in `fn`'s body (null: none, or several).
  TSNode local_value(TSNode fn, const std::string& name) const {
    TSNode found{};
    std::vector<TSNode> todo = {field(fn, "body")};
    while (!todo.empty()) {
      TSNode c = todo.back();
      todo.pop_back();
      if (ts_node_is_null(c) || is(c, "function_definition") || is(c, "lambda") || is(c, "class_definition")) continue;
      if (is(c, "assignment") && is(field(c, "left"), "identifier") && text(field(c, "left")) == name) {
        if (!ts_node_is_null(found)) return TSNode{};
        found = field(c, "right");
      }
      push_children(todo, c);
    }
    return found;
  }


 private:
  std::string text(TSNode n) const { return std::string(ts::text(src_, n)); }
  bool constant(TSNode n) const { return constant_(n); }
  // Records that the value rests on one kind of metadata; true, for the caller's return.
  bool rests_on(const std::string& key) const {
    if (keys_ && std::find(keys_->begin(), keys_->end(), key) == keys_->end()) keys_->push_back(key);
    return true;
  }
  static void push_children(std::vector<TSNode>& todo, TSNode n) {
    auto kids = ts::named_children(n);
    todo.insert(todo.end(), kids.rbegin(), kids.rend());
  }
  std::string_view src_;
  const IsConstant& constant_;
  std::vector<std::string>* keys_;
};

}  // namespace

bool guarded(std::string_view src, TSNode n, TSNode fn, const IsConstant& constant, std::vector<std::string>* keys) {
  std::vector<std::string> found;
  bool g = Guards(src, constant, &found).guarded(n, fn, 0);
  if (g && keys) *keys = std::move(found);
  return g;
}

std::vector<std::string> locals_of(std::string_view src, TSNode fn) {
  IsConstant none = [](TSNode) { return false; };
  return Guards(src, none).locals_of(fn);
}

}  // namespace sitepatch::python::guards
