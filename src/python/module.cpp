#include <atomic>

#include "sitepatch/util/error.hpp"

#include "python/module_impl.hpp"

namespace sitepatch::python {
namespace {
std::atomic<std::size_t> parses{0};
}

std::size_t parse_count() { return parses.load(); }

void Module::Impl::decode() {
  auto what = [&] { return name.empty() ? std::string("the module") : name; };
  auto c = encoding::detect(source);
  if (!c) throw Error(what() + ": " + c.error());
  codec = *c;
  auto d = encoding::decode(source, codec);
  if (!d) throw Error(what() + ": " + d.error() + (codec.name == "utf-8" && codec.iconv.empty() ?
                      " (Python reads a module without a coding line as UTF-8)" : ""));
  if (!codec.identity()) decoded = std::move(*d);
  if (source.compare(0, 3, "\xEF\xBB\xBF") == 0) bom = 3;
}

Module::Module(std::string source, std::string name) : impl_(std::make_unique<Impl>()) {
  impl_->source = std::move(source);
  impl_->name = std::move(name);
  impl_->decode();
  impl_->tree = std::make_unique<ts::Tree>(impl_->text(), impl_->name.empty() ? "the module" : impl_->name);
  ++parses;
  impl_->defs = std::make_unique<Definitions>(impl_->tree->root(), impl_->text());
}

Module Module::edited(std::string new_source, const std::vector<TextChange>& changes) const {
  Module m;
  m.impl_ = std::make_unique<Impl>();
  m.impl_->source = std::move(new_source);
  m.impl_->name = impl_->name;
  m.impl_->decode();
  const size_t bom = impl_->bom;
  std::string_view old_text = impl_->text();
  std::string_view new_text = m.impl_->text();
  // Points advance over text: rows at each '\n', columns in bytes.
  auto advance = [](TSPoint p, std::string_view s) {
    for (char c : s) {
      if (c == '\n') {
        ++p.row;
        p.column = 0;
      } else {
        ++p.column;
      }
    }
    return p;
  };
  std::vector<TSInputEdit> edits;
  TSPoint at{0, 0};
  size_t scanned = 0;  // new_text is final up to each change's start
  for (const auto& c : changes) {
    size_t start = c.new_begin - bom;
    at = advance(at, new_text.substr(scanned, start - scanned));
    scanned = start;
    TSInputEdit e;
    e.start_byte = uint32_t(start);
    e.old_end_byte = uint32_t(start + (c.old_end - c.old_begin));
    e.new_end_byte = uint32_t(c.new_end - bom);
    e.start_point = at;
    e.old_end_point = advance(at, old_text.substr(c.old_begin - bom, c.old_end - c.old_begin));
    e.new_end_point = advance(at, new_text.substr(start, c.new_end - c.new_begin));
    edits.push_back(e);
  }
  m.impl_->tree = std::make_unique<ts::Tree>(m.impl_->text(), *impl_->tree, edits,
                                             impl_->name.empty() ? "the module" : impl_->name);
  ++parses;
  m.impl_->defs = std::make_unique<Definitions>(m.impl_->tree->root(), m.impl_->text());
  return m;
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
