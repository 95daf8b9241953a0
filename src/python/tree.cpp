#include "python/tree.hpp"

#include <stdexcept>

namespace sitepatch::python::ts {

namespace {

// One parser per thread, kept: making one allocates its stacks and lexer afresh, and
// a scan parses thousands of files (or blocks of them) per thread.
TSParser* thread_parser() {
  struct Owned {
    TSParser* p = nullptr;
    ~Owned() {
      if (p) ts_parser_delete(p);
    }
  };
  thread_local Owned owned;
  if (!owned.p) {
    owned.p = ts_parser_new();
    if (!ts_parser_set_language(owned.p, tree_sitter_python())) {
      ts_parser_delete(owned.p);
      owned.p = nullptr;
      throw std::runtime_error("tree-sitter-python: incompatible language version");
    }
  }
  return owned.p;
}

// `range` null: the whole text.
TSTree* parse(std::string_view text, const TSTree* old, const TSRange* range = nullptr) {
  TSParser* parser = thread_parser();
  ts_parser_set_included_ranges(parser, range, range ? 1 : 0);
  TSTree* tree = ts_parser_parse_string(parser, old, text.data(), uint32_t(text.size()));
  if (!tree) {
    ts_parser_reset(parser);
    throw std::runtime_error("tree-sitter-python: parse failed");
  }
  return tree;
}

}  // namespace

Tree::Tree(std::string_view text) : tree_(parse(text, nullptr)) {}

Tree::Tree(std::string_view text, const TSRange& range) : tree_(parse(text, nullptr, &range)) {}

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
