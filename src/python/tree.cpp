#include "python/tree.hpp"

#include <stdexcept>

namespace sitepatch::python::ts {

namespace {

TSTree* parse(std::string_view text, const TSTree* old) {
  TSParser* parser = ts_parser_new();
  if (!ts_parser_set_language(parser, tree_sitter_python())) {
    ts_parser_delete(parser);
    throw std::runtime_error("tree-sitter-python: incompatible language version");
  }
  TSTree* tree = ts_parser_parse_string(parser, old, text.data(), uint32_t(text.size()));
  ts_parser_delete(parser);
  if (!tree) throw std::runtime_error("tree-sitter-python: parse failed");
  return tree;
}

}  // namespace

Tree::Tree(std::string_view text) : tree_(parse(text, nullptr)) {}

Tree::Tree(std::string_view text, const Tree& base, const std::vector<TSInputEdit>& edits) {
  TSTree* old = ts_tree_copy(base.tree_);
  for (const auto& e : edits) ts_tree_edit(old, &e);
  try {
    tree_ = parse(text, old);
  } catch (...) {
    ts_tree_delete(old);
    throw;
  }
  ts_tree_delete(old);
}

Tree::~Tree() {
  if (tree_) ts_tree_delete(tree_);
}

std::vector<TSNode> named_children(TSNode n) {
  std::vector<TSNode> out;
  if (ts_node_is_null(n)) return out;
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&c);
      if (ts_node_is_named(k)) out.push_back(k);
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  return out;
}

std::vector<Child> children(TSNode n) {
  std::vector<Child> out;
  if (ts_node_is_null(n)) return out;
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      const char* f = ts_tree_cursor_current_field_name(&c);
      out.push_back({ts_tree_cursor_current_node(&c), f ? std::string_view(f) : std::string_view()});
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  return out;
}

TSNode field(TSNode n, std::string_view name) {
  return ts_node_child_by_field_name(n, name.data(), uint32_t(name.size()));
}

}  // namespace sitepatch::python::ts
