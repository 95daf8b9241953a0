// A script as its functions see it (see script_view.hpp).
#include "sitepatch/python/script_view.hpp"

#include <set>
#include <vector>

#include "python/tree.hpp"

namespace sitepatch::python {

namespace script_view_impl {

using ts::field;
using ts::is;

bool definition(TSNode n) {
  return is(n, "function_definition") || is(n, "class_definition") || is(n, "decorated_definition");
}

bool import(TSNode n) {
  return is(n, "import_statement") || is(n, "import_from_statement") || is(n, "future_import_statement");
}

// The names an assignment's targets bind (`a = b = f()`, `a, b = ...`, `a: T = ...`).
void targets(std::string_view src, TSNode n, std::set<std::string>& out) {
  if (is(n, "identifier")) {
    out.insert(std::string(ts::text(src, n)));
    return;
  }
  if (is(n, "attribute") || is(n, "subscript")) return;  // binds no module name
  for (TSNode c : ts::named_children(n)) targets(src, c, out);
}

// The name at the root of `REGISTRY[k]`, `cfg.path`, `HANDLERS.append(h)`: what a
// statement at the top level changes when it stores into or calls a method of it.
std::string root_name(std::string_view src, TSNode n) {
  while (is(n, "attribute") || is(n, "subscript") || is(n, "call"))
    n = is(n, "call") ? field(n, "function") : field(n, is(n, "attribute") ? "object" : "value");
  return is(n, "identifier") ? std::string(ts::text(src, n)) : "";
}

// The names a function binds for itself: parameters, and what its own body assigns,
// loops over, imports or defines (not inside functions, classes or lambdas within),
// less what it declares `global`.
void own_names(std::string_view src, TSNode body, std::set<std::string>& bound, std::set<std::string>& global) {
  for (TSNode c : ts::named_children(body)) {
    if (is(c, "function_definition") || is(c, "class_definition")) {
      bound.insert(std::string(ts::text(src, field(c, "name"))));
      continue;
    }
    if (is(c, "lambda")) continue;
    if (is(c, "global_statement") || is(c, "nonlocal_statement")) {
      for (TSNode g : ts::named_children(c)) global.insert(std::string(ts::text(src, g)));
      continue;
    }
    if (is(c, "assignment") || is(c, "augmented_assignment")) targets(src, field(c, "left"), bound);
    if (is(c, "for_statement") || is(c, "for_in_clause")) targets(src, field(c, "left"), bound);
    if (is(c, "as_pattern")) targets(src, field(c, "alias"), bound);
    if (is(c, "import_statement") || is(c, "import_from_statement")) {
      for (auto& ch : ts::children(c))
        if (ch.field == "name") {
          TSNode n = is(ch.node, "aliased_import") ? field(ch.node, "alias") : ch.node;
          std::string t(ts::text(src, n));
          bound.insert(t.substr(0, t.find('.')));
        }
      continue;
    }
    own_names(src, c, bound, global);
  }
}

// The names code under `n` reads from the module: identifiers no enclosing function
// binds for itself (attribute names and keyword names are no reads).
void reads(std::string_view src, TSNode n, const std::set<std::string>& bound, std::set<std::string>& out) {
  if (is(n, "identifier")) {
    TSNode parent = ts_node_parent(n);
    if (is(parent, "attribute") && ts_node_eq(field(parent, "attribute"), n)) return;
    if (is(parent, "keyword_argument") && ts_node_eq(field(parent, "name"), n)) return;
    std::string name(ts::text(src, n));
    if (!bound.count(name)) out.insert(name);
    return;
  }
  if (is(n, "function_definition") || is(n, "lambda")) {
    std::set<std::string> inner = bound, global;
    for (TSNode p : ts::named_children(field(n, "parameters"))) {
      TSNode name = is(p, "identifier") ? p : field(p, "name");
      if (ts_node_is_null(name))
        for (TSNode c : ts::named_children(p))
          if (is(c, "identifier")) name = c;
      if (!ts_node_is_null(name)) inner.insert(std::string(ts::text(src, name)));
    }
    if (is(n, "function_definition")) own_names(src, field(n, "body"), inner, global);
    for (auto& g : global) inner.erase(g);
    for (TSNode c : ts::named_children(n)) reads(src, c, inner, out);
    return;
  }
  for (TSNode c : ts::named_children(n)) reads(src, c, bound, out);
}

// Whether statement `n` (top level, or inside a kept compound statement) must stay:
// an import, a definition, or an assignment to one of `read`.
bool needed(std::string_view src, TSNode n, const std::set<std::string>& read, const std::set<std::string>& made) {
  if (import(n) || definition(n) || is(n, "global_statement")) return true;
  if (is(n, "expression_statement")) {
    for (TSNode e : ts::named_children(n)) {
      std::set<std::string> bound;
      // A method called on a name the functions read may fill it (`HANDLERS.append(h)`),
      // as a store into its items or attributes does (`REGISTRY[k] = v`).
      // Only an object the script made itself: `torch.manual_seed(0)` fills no name of it.
      auto changes = [&](TSNode t) {
        std::string root = root_name(src, t);
        if (made.count(root)) bound.insert(root);
      };
      if (is(e, "call") && is(field(e, "function"), "attribute")) changes(field(e, "function"));
      for (TSNode a = e; is(a, "assignment") || is(a, "augmented_assignment"); a = field(a, "right")) {
        TSNode left = field(a, "left");
        if (is(left, "attribute") || is(left, "subscript")) changes(left);
        else targets(src, left, bound);
      }
      for (auto& b : bound)
        if (read.count(b)) return true;
    }
    return false;
  }
  // A compound statement: kept whole when anything inside it is needed.
  for (TSNode c : ts::named_children(n))
    if (needed(src, c, read, made)) return true;
  return false;
}

// The names the top level's own assignments bind (`REGISTRY = {}`), in compound
// statements too: the objects the script makes.
void made_names(std::string_view src, TSNode n, std::set<std::string>& out) {
  for (TSNode c : ts::named_children(n)) {
    if (definition(c)) continue;
    if (is(c, "assignment") || is(c, "augmented_assignment")) targets(src, field(c, "left"), out);
    made_names(src, c, out);
  }
}

}  // namespace script_view_impl

std::string functions_view(std::string_view source) {
  namespace impl = script_view_impl;
  std::string out(source);
  std::set<std::string> read;
  try {
    ts::Tree tree(source);
    auto top = ts::named_children(tree.root());
    for (TSNode n : top) {
      if (impl::definition(n)) impl::reads(source, n, {}, read);
      // Names a star import binds cannot be known: keep the script whole.
      if (ts::is(n, "import_from_statement"))
        for (TSNode c : ts::named_children(n))
          if (ts::is(c, "wildcard_import")) return out;
    }
    std::set<std::string> made;
    impl::made_names(source, tree.root(), made);
    for (TSNode n : top) {
      if (ts_node_has_error(n) || ts::is(n, "ERROR")) return std::string(source);
      if (ts::is(n, "comment") || impl::needed(source, n, read, made)) continue;
      for (size_t i = ts_node_start_byte(n); i < ts_node_end_byte(n); ++i)
        if (out[i] != '\n' && out[i] != '\r') out[i] = ' ';
    }
  } catch (const std::exception&) {
    return std::string(source);
  }
  return out;
}

}  // namespace sitepatch::python
