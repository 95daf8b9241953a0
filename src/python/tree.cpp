#include "python/tree.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace sitepatch::python::ts {

Bounds& bounds() {
  thread_local Bounds b;
  return b;
}

namespace {

// The bound for parsing `bytes` of Python in one go.
uint64_t limit_for(std::size_t bytes) {
  const Bounds& b = bounds();
  return b.base_micros + uint64_t(double(b.micros_per_mib) * double(bytes) / (1024 * 1024));
}

FileBudget*& current_budget() {
  thread_local FileBudget* budget = nullptr;
  return budget;
}

}  // namespace

FileBudget::FileBudget(std::size_t bytes)
    : file_bytes(bytes), limit_micros(limit_for(bytes)), outer_(current_budget()) {
  current_budget() = this;
}

FileBudget::~FileBudget() { current_budget() = outer_; }

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

std::string size_text(std::size_t bytes) {
  char buf[32];
  if (bytes < 1024 * 1024) std::snprintf(buf, sizeof buf, "%.0f KB", double(bytes) / 1024);
  else std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / (1024 * 1024));
  return buf;
}

std::string subject(std::string_view what) {
  return what.empty() ? std::string("a Python text") : std::string(what);
}

// `range` null: the whole text. Within a FileBudget the parse has what the file's
// earlier parses left of its bound, else its own. Parsing is linear in the text (the
// grammar's scanner is patched for comment runs: cmake/patches/), about 10 MB a second on one core here;
// the bounds leave a slow, loaded machine 20x that and stop what would otherwise hold
// the environment's lock for minutes (syntax errors around long comment runs are still
// quadratic in the grammar's error recovery). The size bound also keeps offsets within
// tree-sitter's 32 bits.
TSTree* parse(std::string_view text, const TSTree* old, std::string_view what, const TSRange* range = nullptr) {
  const Bounds& b = bounds();
  std::size_t size = range ? range->end_byte - range->start_byte : text.size();
  if (text.size() > b.max_bytes || text.size() > UINT32_MAX)
    throw ParseLimit(subject(what) + ": " + size_text(text.size()) + " of Python, more than the " +
                     size_text(b.max_bytes) + " sitepatch parses");
  FileBudget* file = current_budget();
  // What the message states: the bound for the whole file when one is kept for it.
  const uint64_t bound = file ? file->limit_micros : limit_for(size);
  const std::size_t bound_bytes = file ? file->file_bytes : size;
  auto stopped = [&] {
    char secs[64];
    std::snprintf(secs, sizeof secs, "%.3g s", double(bound) / 1e6);
    return ParseLimit(subject(what) + ": parsing stopped after " + secs + ", the bound for " + size_text(bound_bytes) +
                      " of Python; no genuine module takes that long (this one is malformed, or built to "
                      "stall tools: say, long runs of comment lines around a syntax error)");
  };
  if (file && file->spent_micros >= file->limit_micros) throw stopped();
  const uint64_t limit = file ? file->limit_micros - file->spent_micros : bound;
  TSParser* parser = thread_parser();
  ts_parser_set_included_ranges(parser, range, range ? 1 : 0);
  ts_parser_set_timeout_micros(parser, limit);  // at least 1: 0 would mean none
  auto start = std::chrono::steady_clock::now();
  TSTree* tree = ts_parser_parse_string(parser, old, text.data(), uint32_t(text.size()));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (file) file->spent_micros += uint64_t(took * 1e6);
  if (!tree) {
    // The parser keeps a stopped parse to resume; the next text must start afresh.
    ts_parser_reset(parser);
    if (took * 1e6 < double(limit)) throw std::runtime_error("tree-sitter-python: parse failed");
    if (file) file->spent_micros = file->limit_micros;  // nothing more of this file is parsed
    throw stopped();
  }
  return tree;
}

}  // namespace

Tree::Tree(std::string_view text, std::string_view what) : tree_(parse(text, nullptr, what)) {}

Tree::Tree(std::string_view text, const TSRange& range, std::string_view what)
    : tree_(parse(text, nullptr, what, &range)) {}

Tree::Tree(std::string_view text, const Tree& base, const std::vector<TSInputEdit>& edits, std::string_view what) {
  TSTree* old = ts_tree_copy(base.tree_);
  for (const auto& e : edits) ts_tree_edit(old, &e);
  try {
    tree_ = parse(text, old, what);
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

std::optional<std::string> plain_string(std::string_view src, TSNode n) {
  if (!is(n, "string")) return std::nullopt;
  std::string_view t = text(src, n);
  if (t.size() < 2 || (t[0] != '"' && t[0] != '\'') || t.back() != t[0] || t.find('\\') != std::string_view::npos)
    return std::nullopt;
  if (t.size() >= 6 && t[1] == t[0] && t[2] == t[0]) return std::nullopt;
  return std::string(t.substr(1, t.size() - 2));
}

}  // namespace sitepatch::python::ts
