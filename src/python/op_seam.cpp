// A library's custom-op seam (see op_seam.hpp): op decorators, identity decorator
// factories and the top-level `from` imports that say where a factory lives.
#include "sitepatch/python/op_seam.hpp"

#include <algorithm>
#include <functional>

#include "python/relative_import.hpp"
#include "python/tree.hpp"

namespace sitepatch::python {

namespace op_seam_impl {

using ts::field;
using ts::is;

std::string name_of_param(std::string_view src, TSNode p) {
  if (is(p, "identifier")) return std::string(ts::text(src, p));
  if (is(p, "default_parameter") || is(p, "typed_default_parameter")) return std::string(ts::text(src, field(p, "name")));
  if (is(p, "typed_parameter"))
    for (TSNode c : ts::named_children(p))
      if (is(c, "identifier")) return std::string(ts::text(src, c));
  return "";  // `/`, `*`, *args, **kwargs
}

std::vector<std::string> params_of(std::string_view src, TSNode fn) {
  std::vector<std::string> out;
  for (TSNode p : ts::named_children(field(fn, "parameters")))
    if (std::string n = name_of_param(src, p); !n.empty()) out.push_back(n);
  return out;
}

// The return statements of a function's own body (not of functions, lambdas or classes
// inside it), and the functions it defines directly.
void returns_in(TSNode n, std::vector<TSNode>& returns, std::vector<TSNode>& nested) {
  for (TSNode c : ts::named_children(n)) {
    if (is(c, "function_definition")) {
      nested.push_back(c);
      continue;
    }
    if (is(c, "decorated_definition") || is(c, "class_definition") || is(c, "lambda")) continue;
    if (is(c, "return_statement")) returns.push_back(c);
    else returns_in(c, returns, nested);
  }
}

TSNode returned(TSNode ret) {
  for (TSNode c : ts::named_children(ret))
    if (!is(c, "comment")) return c;
  return TSNode{};
}

// `def inner(f): return f` (every return gives its one parameter).
bool identity_def(std::string_view src, TSNode fn) {
  std::vector<std::string> params = params_of(src, fn);
  if (params.size() != 1) return false;
  std::vector<TSNode> returns, nested;
  returns_in(field(fn, "body"), returns, nested);
  if (returns.empty()) return false;
  return std::all_of(returns.begin(), returns.end(), [&](TSNode r) {
    TSNode v = returned(r);
    return is(v, "identifier") && ts::text(src, v) == params[0];
  });
}

// `lambda x: x`.
bool identity_lambda(std::string_view src, TSNode v) {
  if (!is(v, "lambda")) return false;
  auto params = ts::named_children(field(v, "parameters"));
  TSNode body = field(v, "body");
  return params.size() == 1 && is(params[0], "identifier") && is(body, "identifier") &&
         ts::text(src, params[0]) == ts::text(src, body);
}

// Whether the factory `fn` gives back what it decorates unchanged: every return is
// `lambda x: x`, an identity function it defines, or one of its parameters but the first
// (the function, when it is given directly), or a conditional choosing between those, and
// at least one gives the decorator.
bool identity_factory(std::string_view src, TSNode fn, std::string& function_param) {
  std::vector<std::string> params = params_of(src, fn);
  if (params.empty()) return false;
  std::vector<TSNode> returns, nested;
  returns_in(field(fn, "body"), returns, nested);
  if (returns.empty()) return false;
  std::vector<std::string> identities;
  for (TSNode d : nested)
    if (identity_def(src, d)) identities.push_back(std::string(ts::text(src, field(d, "name"))));
  bool decorator = false;  // some return gives a decorator: a function that returns
                           // its parameter alone is no factory (`def op(x, out): return out`)
  std::function<bool(TSNode)> gives_back = [&](TSNode v) {
    if (identity_lambda(src, v)) return decorator = true;
    if (is(v, "parenthesized_expression")) return gives_back(ts::named_children(v).empty() ? TSNode{} : ts::named_children(v)[0]);
    if (is(v, "conditional_expression")) {
      auto parts = ts::named_children(v);  // body, condition, alternative
      return parts.size() == 3 && gives_back(parts[0]) && gives_back(parts[2]);
    }
    if (!is(v, "identifier")) return false;
    std::string name(ts::text(src, v));
    if (std::find(identities.begin(), identities.end(), name) != identities.end()) return decorator = true;
    if (std::find(params.begin() + 1, params.end(), name) != params.end()) {
      function_param = name;
      return true;
    }
    return false;
  };
  return std::all_of(returns.begin(), returns.end(), [&](TSNode r) { return gives_back(returned(r)); }) && decorator;
}

// Module-level function definitions, through if/else and try at module level.
void module_functions(TSNode n, std::vector<TSNode>& out) {
  for (TSNode c : ts::named_children(n)) {
    if (is(c, "function_definition")) out.push_back(c);
    else if (is(c, "decorated_definition")) {
      if (is(field(c, "definition"), "function_definition")) out.push_back(field(c, "definition"));
    } else if (is(c, "if_statement") || is(c, "else_clause") || is(c, "elif_clause") || is(c, "try_statement") ||
               is(c, "except_clause") || is(c, "finally_clause") || is(c, "block")) {
      module_functions(c, out);
    }
  }
}

// Every decorator in the text written as a call whose first argument is a string naming
// a custom op.
void op_decorators(std::string_view src, TSNode n, std::vector<OpDecorator>& out) {
  for (TSNode c : ts::named_children(n)) {
    if (is(c, "decorated_definition")) {
      TSNode def = field(c, "definition");
      for (TSNode d : ts::named_children(c)) {
        if (!is(d, "decorator")) continue;
        auto e = ts::named_children(d);
        if (e.empty() || !is(e[0], "call")) continue;
        auto args = ts::named_children(field(e[0], "arguments"));
        if (args.empty() || !(is(args[0], "string") || is(args[0], "concatenated_string"))) continue;
        std::string op(ts::text(src, args[0]));
        if (op.find("::") == std::string::npos) continue;
        OpDecorator x;
        x.callee = std::string(ts::text(src, field(e[0], "function")));
        x.op = op;
        x.function = std::string(ts::text(src, field(def, "name")));
        x.first = ts::line(c);
        x.last = int(ts_node_end_point(c).row) + 1;
        out.push_back(std::move(x));
      }
    }
    op_decorators(src, c, out);
  }
}

// "M:n" for `from M import n`, M made absolute against the importing module's package.
void from_imports(std::string_view src, TSNode root, const std::string& module, bool package,
                  std::map<std::string, std::string>& out) {
  std::vector<TSNode> level = {root};
  while (!level.empty()) {
    TSNode n = level.back();
    level.pop_back();
    for (TSNode s : ts::named_children(n)) {
      if (is(s, "if_statement") || is(s, "else_clause") || is(s, "elif_clause") || is(s, "try_statement") ||
          is(s, "except_clause") || is(s, "block")) {
        level.push_back(s);
        continue;
      }
      if (!is(s, "import_from_statement")) continue;
      std::string base = absolute_from(src, field(s, "module_name"), module, package);
      if (base.empty()) continue;
      for (auto& child : ts::children(s)) {
        if (child.field != "name") continue;
        TSNode name = child.node;
        if (is(name, "aliased_import"))
          out[std::string(ts::text(src, field(name, "alias")))] = base + ":" + std::string(ts::text(src, field(name, "name")));
        else
          out[std::string(ts::text(src, name))] = base + ":" + std::string(ts::text(src, name));
      }
    }
  }
}

}  // namespace op_seam_impl

const OpDecorator* ModuleSeams::op_at(int line) const {
  const OpDecorator* best = nullptr;
  for (const OpDecorator& o : ops)
    if (line >= o.first && line <= o.last && (!best || o.first > best->first)) best = &o;
  return best;
}

ModuleSeams module_seams(std::string_view source, const std::string& module, bool package) {
  ModuleSeams out;
  ts::Tree tree(source);
  op_seam_impl::op_decorators(source, tree.root(), out.ops);
  std::vector<TSNode> fns;
  op_seam_impl::module_functions(tree.root(), fns);
  std::map<std::string, int> defs;
  for (TSNode fn : fns) {
    std::string name(ts::text(source, ts::field(fn, "name")));
    int occurrence = ++defs[name];
    std::string function_param;
    if (!op_seam_impl::identity_factory(source, fn, function_param)) continue;
    SeamFactory& f = out.factories[name];
    f.name = name;
    f.occurrences.push_back(occurrence);
    f.params = op_seam_impl::params_of(source, fn);
    if (!function_param.empty()) f.function_param = function_param;
  }
  for (auto& [name, f] : out.factories) f.defs = defs[name];
  op_seam_impl::from_imports(source, tree.root(), module, package, out.from_imports);
  return out;
}

}  // namespace sitepatch::python
