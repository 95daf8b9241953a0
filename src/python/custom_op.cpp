// register-custom-op: a module-level function made a torch custom op, so that dynamo
// sees one node where it could not trace the body (a JIT loader, a kernel handle):
// torch.library.custom_op outermost on the def, and its fake implementation (the
// recipe's `code`, a body of the function's own parameters) registered right after it.
// The two parts are add-decorator's and insert-after's, so "already there" and the
// placement read as theirs.
#include <algorithm>
#include <cctype>

#include "python/plan.hpp"

namespace sitepatch::python {

namespace {

// torch's schema type of an annotation: Tensor, int, float, bool, str; a list of one of
// those but str ("int[]"); any of them optional ("bool?": `Optional[bool]`, `bool | None`).
// "" when it is none of those.
std::string annotated_type(std::string a) {
  a.erase(std::remove(a.begin(), a.end(), ' '), a.end());
  for (const char* prefix : {"typing.", "torch."})
    if (a.rfind(prefix, 0) == 0) a = a.substr(std::string(prefix).size());
  auto inside = [&](const std::string& head) {
    return a.size() > head.size() + 1 && a.rfind(head + "[", 0) == 0 && a.back() == ']'
               ? a.substr(head.size() + 1, a.size() - head.size() - 2)
               : std::string();
  };
  std::string inner = inside("Optional");
  if (inner.empty() && a.size() > 5 && a.compare(a.size() - 5, 5, "|None") == 0) inner = a.substr(0, a.size() - 5);
  if (inner.empty() && a.rfind("None|", 0) == 0) inner = a.substr(5);
  if (!inner.empty()) {
    std::string t = annotated_type(inner);
    return t.empty() || t.back() == '?' ? "" : t + "?";
  }
  for (const char* list : {"List", "list", "Sequence", "Tuple", "tuple"}) {
    std::string item = inside(list);
    if (!item.empty() && item.size() > 5 && item.compare(item.size() - 5, 5, ",...") == 0)
      item = item.substr(0, item.size() - 5);  // Tuple[int, ...]
    std::string t = item.empty() ? "" : annotated_type(item);
    if (t == "Tensor" || t == "int" || t == "float" || t == "bool") return t + "[]";
    if (!item.empty()) return "";
  }
  if (a == "Tensor" || a == "int" || a == "float" || a == "bool" || a == "str") return a;
  return "";
}

// torch's schema type of a parameter, from its annotation or its default.
std::string param_type(std::string_view annotation, std::string_view value) {
  std::string a(annotation);
  if (!a.empty()) return annotated_type(a);
  if (value.empty()) return "Tensor";  // no default: what a kernel wrapper takes
  if (value == "True" || value == "False") return "bool";
  if (value == "None") return "Tensor?";
  if (value.front() == '"' || value.front() == '\'') return "str";
  bool number = std::all_of(value.begin(), value.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == 'e';
  });
  if (number) return value.find_first_of(".e") == std::string_view::npos ? "int" : "float";
  return "";
}

// The schema of `d`'s parameters ("(Tensor x, int n=4)"); "" with `why` set when one
// has no torch type this can tell.
std::string schema_params(const Context& cx, const Def& d, std::string& why) {
  std::string out;
  for (TSNode p : ts::named_children(ts::field(d.node, "parameters"))) {
    std::string_view t = ts_node_type(p);
    std::string name, annotation, value;
    if (t == "identifier") {
      name = ts::text(cx.src, p);
    } else if (t == "typed_parameter") {
      TSNode first = ts_node_named_child(p, 0);
      if (!ts::is(first, "identifier")) {
        why = "it takes *args or **kwargs, which a custom op's schema cannot";
        return "";
      }
      name = ts::text(cx.src, first);
      annotation = ts::text(cx.src, ts::field(p, "type"));
    } else if (t == "default_parameter" || t == "typed_default_parameter") {
      name = ts::text(cx.src, ts::field(p, "name"));
      value = ts::text(cx.src, ts::field(p, "value"));
      if (t == "typed_default_parameter") annotation = ts::text(cx.src, ts::field(p, "type"));
    } else if (t == "list_splat_pattern" || t == "dictionary_splat_pattern") {
      why = "it takes *args or **kwargs, which a custom op's schema cannot";
      return "";
    } else {
      continue;  // `*`, `/`
    }
    std::string type = param_type(annotation, value);
    if (type.empty()) {
      why = "no torch type for parameter `" + name + "`" + (annotation.empty() ? "" : " (" + annotation + ")") +
            ": give `op-schema`";
      return "";
    }
    std::string item = type + " " + name;
    if (!value.empty()) item += "=" + std::string(value == "None" ? "None" : value);
    out += (out.empty() ? "" : ", ") + item;
  }
  return "(" + out + ")";
}

// What the fake's body returns: "Tensor", or "(Tensor, Tensor)" for a tuple of n.
std::string schema_result(const recipe::Edit& e) {
  std::string_view code = text::strip(e.code);
  size_t ret = code.rfind("return ");
  if (ret == std::string_view::npos) return "Tensor";
  std::string_view value = code.substr(ret + 7);
  // Top-level commas of the returned expression: a tuple of that many tensors.
  int depth = 0, commas = 0;
  for (char c : value) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == ',' && depth == 0) ++commas;
    else if (c == '\n') break;
  }
  if (commas == 0) return "Tensor";
  std::string out = "(";
  for (int i = 0; i <= commas; ++i) out += i ? ", Tensor" : "Tensor";
  return out + ")";
}

// A namespace of our own: a library that registers ops of its own under its package's
// name (flashinfer::silu_and_mul) would collide with one of the same name.
std::string default_namespace(const recipe::Edit& e) {
  std::string top = !e.module.empty() ? e.module.substr(0, e.module.find('.')) : e.file.substr(0, e.file.find('/'));
  if (top.size() > 3 && top.compare(top.size() - 3, 3, ".py") == 0) top.resize(top.size() - 3);
  for (char& c : top)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return top.empty() ? "sitepatch" : "sitepatch_" + top;
}

bool module_level(const Def& d) {
  for (TSNode p = ts_node_parent(d.outer); !ts_node_is_null(p); p = ts_node_parent(p))
    if (ts::is(p, "function_definition") || ts::is(p, "class_definition")) return false;
  return true;
}

}  // namespace

std::string custom_op_decorator(const Context& cx, const Def& d, const recipe::Edit& e, std::string& why) {
  std::string schema = e.op_schema;
  if (schema.empty()) {
    std::string params = schema_params(cx, d, why);
    if (params.empty()) return "";
    schema = params + " -> " + schema_result(e);
  }
  std::string name = e.op_name.empty() ? default_namespace(e) + "::" + d.qualified : e.op_name;
  return "torch.library.custom_op(\"" + name + "\", mutates_args=(), schema=\"" + schema + "\")";
}

bool register_custom_op(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out, EditResult& r) {
  if (!ts::is(d.node, "function_definition"))
    return fail(r, Failure::invalid, d.qualified + " is no function: register-custom-op needs a module-level function");
  if (!module_level(d))
    return fail(r, Failure::invalid,
                d.qualified + " is a method or nested function: register-custom-op needs a module-level function");
  if (text::strip(e.code).empty()) return fail(r, Failure::invalid, "register-custom-op needs its fake implementation");
  std::string why;
  std::string decorator = custom_op_decorator(cx, d, e, why);
  if (decorator.empty()) return fail(r, Failure::invalid, "register-custom-op on " + d.qualified + ": " + why);
  recipe::Edit outer = e;
  outer.action = recipe::Action::add_decorator;
  outer.code = decorator;
  outer.innermost = false;
  recipe::Edit fake = e;
  fake.action = recipe::Action::insert_after;
  std::string params(ts::text(cx.src, ts::field(d.node, "parameters")));
  // Four spaces and LF here: insert-after gives it the file's own indent unit and line ends.
  std::string body = reindent_code(e.code, "    ", text::Style{});
  fake.code = "@" + d.qualified + ".register_fake\ndef _" + d.qualified + "_fake" + params + ":\n" + body;
  ActionOut a, b;
  if (!add_decorator(cx, d, outer, a, r) || !insert_after(cx, d, fake, b, r)) return false;
  out.already = a.already && b.already;
  if (!out.already) {
    for (auto& s : a.splices) out.splices.push_back(std::move(s));
    for (auto& s : b.splices) out.splices.push_back(std::move(s));
  }
  return true;
}

}  // namespace sitepatch::python
