// How a module binds a name in the arms of its try and if statements (fallback.hpp): a
// C function and the library's pure-Python definition of the same name.
#include "sitepatch/python/fallback.hpp"

#include <algorithm>

#include "python/relative_import.hpp"
#include "python/tree.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::python {

namespace fallback_impl {

using ts::field;
using ts::is;

bool arm(TSNode n) {
  return is(n, "if_statement") || is(n, "else_clause") || is(n, "elif_clause") || is(n, "try_statement") ||
         is(n, "except_clause") || is(n, "finally_clause") || is(n, "block");
}

// The text of `n` with its first line's column taken off every line (a definition nested
// in an except clause, moved to the module's top).
std::string dedented(std::string_view src, TSNode n) {
  uint32_t column = ts_node_start_point(n).column;
  std::string text(ts::text(src, n));
  std::string out;
  size_t at = 0;
  bool first = true;
  while (at <= text.size()) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (!first) {
      size_t spaces = line.find_first_not_of(" \t");
      line = line.substr(std::min<size_t>(column, spaces == std::string::npos ? line.size() : spaces));
    }
    out += line;
    first = false;
    if (end == std::string::npos) break;
    out += "\n";
    at = end + 1;
  }
  return out;
}

class Binder {
 public:
  Binder(std::string_view src, NameBindings& out, const std::string& module, bool package)
      : src_(src), out_(out), module_(module), package_(package) {}

  void scan(TSNode n) {
    for (TSNode s : ts::named_children(n)) {
      if (arm(s)) {
        scan(s);
        continue;
      }
      TSNode def = is(s, "decorated_definition") ? field(s, "definition") : s;
      if (is(def, "function_definition") && text(field(def, "name")) == out_.name) {
        out_.defs.push_back(dedented(src_, s));
        bound(s);
      } else if (is(s, "import_from_statement")) {
        imported(s);
      }
    }
  }

  void next_definition(TSNode root) {
    for (TSNode s : ts::named_children(root)) {
      TSNode def = is(s, "decorated_definition") ? field(s, "definition") : s;
      if ((is(def, "function_definition") || is(def, "class_definition")) && ts::line(s) > out_.last_line) {
        out_.next_definition = text(field(def, "name"));
        out_.next_is_class = is(def, "class_definition");
        return;
      }
    }
  }

 private:
  void imported(TSNode s) {
    std::string base = absolute_from(src_, field(s, "module_name"), module_, package_);
    if (base.empty()) return;
    for (auto& child : ts::children(s)) {
      if (child.field != "name") continue;
      TSNode n = child.node;
      bool alias = is(n, "aliased_import");
      std::string as = text(alias ? field(n, "alias") : n);
      if (as != out_.name) continue;
      out_.imports.push_back(base + ":" + text(alias ? field(n, "name") : n));
      bound(s);
    }
  }
  void bound(TSNode s) { out_.last_line = std::max(out_.last_line, int(ts_node_end_point(s).row) + 1); }
  std::string text(TSNode n) const { return std::string(ts::text(src_, n)); }

  std::string_view src_;
  NameBindings& out_;
  const std::string& module_;
  bool package_;
};

}  // namespace fallback_impl

NameBindings module_bindings(std::string_view source, const std::string& name, const std::string& module,
                             bool package) {
  NameBindings out;
  out.name = name;
  ts::Tree tree(source);
  fallback_impl::Binder b(source, out, module, package);
  b.scan(tree.root());
  if (out.last_line > 0) b.next_definition(tree.root());
  return out;
}

}  // namespace sitepatch::python
