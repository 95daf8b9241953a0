#include "python/module_impl.hpp"

namespace sitepatch::python {

Module::Module(std::string source) : impl_(std::make_unique<Impl>()) {
  impl_->source = std::move(source);
  if (impl_->source.compare(0, 3, "\xEF\xBB\xBF") == 0) impl_->bom = 3;
  impl_->tree = std::make_unique<ts::Tree>(impl_->text());
  impl_->defs = std::make_unique<Definitions>(impl_->tree->root(), impl_->text());
}

Module::~Module() = default;
Module::Module(Module&&) noexcept = default;
Module& Module::operator=(Module&&) noexcept = default;

const std::string& Module::source() const { return impl_->source; }

std::vector<Definition> Module::definitions() const {
  std::vector<Definition> out;
  out.reserve(impl_->defs->all().size());
  for (const Def& d : impl_->defs->all()) out.push_back({d.qualified, d.kind, d.line});
  return out;
}

bool Module::defines(std::string_view qualified) const {
  return impl_->defs->find(qualified) != nullptr;
}

// A walk that skips every subtree without errors.
std::vector<SyntaxProblem> Module::syntax_problems() const {
  std::vector<SyntaxProblem> out;
  TSNode root = impl_->tree->root();
  if (!ts_node_has_error(root)) return out;
  TSTreeCursor c = ts_tree_cursor_new(root);
  while (true) {
    TSNode n = ts_tree_cursor_current_node(&c);
    TSPoint p = ts_node_start_point(n);
    bool descend = ts_node_has_error(n);
    if (ts_node_is_missing(n))
      out.push_back({int(p.row) + 1, int(p.column) + 1, "missing `" + std::string(ts_node_type(n)) + "`"});
    else if (ts::is(n, "ERROR"))
      out.push_back({int(p.row) + 1, int(p.column) + 1, "syntax error"});
    if (descend && ts_tree_cursor_goto_first_child(&c)) continue;
    bool done = false;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        done = true;
        break;
      }
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&c);
  return out;
}

}  // namespace sitepatch::python
