// The names a function uses: see extractor.hpp.
#include <algorithm>

#include "audit/extractor.hpp"
#include "python/tree.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::detail {

using python::ts::field;
using python::ts::is;

void Extractor::implicit_ref(const Frame& f, TSNode value, const char* dunder) {
  if (!types_ || f.mute || f.fn == 0 || ts_node_is_null(value)) return;
  while (is(value, "parenthesized_expression") && python::ts::named_children(value).size() == 1)
    value = python::ts::named_children(value)[0];
  bool made = is(value, "call");
  std::string d = dotted(made ? field(value, "function") : value);
  if (d.empty() || d == "self" || d == "cls") return;
  add_ref(f.fn, value, d + "." + dunder, Ref::call, made);
}

void Extractor::add_ref(int fn, TSNode at, std::string name, Ref::Kind kind, bool on_result) {
  TSPoint p = ts_node_start_point(at);
  auto& refs = m_.functions[fn].refs;
  Ref& r = refs.emplace_back();
  r.name = std::move(name);
  r.line = int(p.row) + 1;
  r.column = int(p.column) + 1;
  r.kind = kind;
  r.on_result = on_result;
}

void Extractor::value(const Frame& f, TSNode n, bool stored) {
  if (f.mute) return;
  std::string d = dotted(n);
  if (d.empty()) return;
  add_ref(f.fn, n, std::move(d), Ref::value);
  m_.functions[f.fn].refs.back().stored = stored;
}

void Extractor::read_attribute(const Frame& f, TSNode n) {
  value(f, n);
  mark_last_value(f, n, &Ref::read);
}

void Extractor::mark_last_value(const Frame& f, TSNode n, bool Ref::*flag) {
  auto& refs = m_.functions[f.fn].refs;
  if (!refs.empty() && refs.back().kind == Ref::value && refs.back().line == int(ts_node_start_point(n).row) + 1 &&
      refs.back().column == int(ts_node_start_point(n).column) + 1)
    refs.back().*flag = true;
}

void Extractor::call(Frame& f, TSNode n) {
  auto& refs = m_.functions[f.fn].refs;
  size_t before = refs.size();
  callee(f, n);
  if (!types_) return;
  for (size_t k = before; k < refs.size(); ++k) {
    if (refs[k].kind != Ref::call) continue;
    refs[k].values = argument_values(field(n, "arguments"));
  }
}

void Extractor::callee(Frame& f, TSNode n) {
  TSNode fn = field(n, "function");
  std::string name = dotted(fn);
  if (!name.empty()) {
    // isinstance(p, subprocess.Popen) checks a type; it makes nothing.
    if (name.size() == 10 && (name == "isinstance" || name == "issubclass")) f.mute_kids = true;
    add_ref(f.fn, n, std::move(name), Ref::call);
    m_.functions[f.fn].refs.back().raised = f.raised;
    return;
  }
  // `d[k]()`: an item of d called ("d.[]"), followed when d's items are known.
  if (std::string item = item_of(fn); !item.empty()) return add_ref(f.fn, n, item, Ref::call);
  // `for name in ("a", "b"): getattr(m, name)()` calls m.a and m.b.
  if (auto names = getattr_names(f.fn, fn); !names.empty()) {
    for (const auto& name : names) add_ref(f.fn, n, name, Ref::call);
    return;
  }
  // `getattr(m, "name")()` is `m.name()`; `getattr(m, name)()` any attribute of m
  // ("m.[getattr]"), followed to each function when m is a module.
  if (std::string got = got_attribute(fn); !got.empty()) return add_ref(f.fn, n, got, Ref::call);
  // `X(...).m()`: a method of what X returns (a class: its instance).
  if (is(fn, "attribute")) {
    TSNode obj = field(fn, "object");
    std::string attr = text(field(fn, "attribute"));
    obj = path_base(obj);
    if (is(obj, "call")) {
      std::string inner = dotted(field(obj, "function"));
      if (inner.empty()) inner = item_of(field(obj, "function"));
      if (!inner.empty()) {
        add_ref(f.fn, n, inner + "." + attr, Ref::call, true);
        return;
      }
    }
    // `Path(x).resolve().exists()`, `Spec().paths.root.mkdir()`: the method of what
    // the steps before it give (a scan does not infer values: a dynamic call to it).
    // `(p / "y").exists()` with no call in it: the method of what p holds.
    if (std::string steps = types_ ? value_steps(obj) : ""; !steps.empty())
      return add_ref(f.fn, n, steps + "." + attr, Ref::call, steps.find("()") != std::string::npos);
    std::string_view t = ts_node_type(obj);
    if (t == "string" || t == "concatenated_string") return add_ref(f.fn, n, "str." + attr, Ref::call);
    if (t == "list" || t == "list_comprehension") return add_ref(f.fn, n, "list." + attr, Ref::call);
    if (t == "dictionary" || t == "dictionary_comprehension") return add_ref(f.fn, n, "dict." + attr, Ref::call);
  }
  // Only the first line's first bytes are kept: copying the whole callee first made
  // `f()()()...` quadratic (each call's callee holds the rest).
  std::string_view all = python::ts::text(src_, fn);
  std::string what(all.substr(0, std::min(all.find('\n'), size_t(61))));
  if (what.size() > 60) what = what.substr(0, 57) + "...";
  add_ref(f.fn, n, what, Ref::dynamic);
}

void Extractor::attribute_reads(const Frame& f, TSNode n) {
  if (!types_ || f.mute) return;
  for (TSNode k : python::ts::named_children(n))
    if (is(k, "attribute")) read_attribute(f, k);
}

bool Extractor::reads_operands(std::string_view t) {
  return t == "comparison_operator" || t == "boolean_operator" || t == "binary_operator" ||
         t == "not_operator" || t == "unary_operator" || t == "interpolation" || t == "conditional_expression" ||
         t == "assert_statement" || t == "parenthesized_expression";
}

void Extractor::elements(const Frame& f, TSNode n) {
  for (TSNode k : python::ts::named_children(n)) value(f, k);
}

void Extractor::arguments(const Frame& f, TSNode n) {
  if (f.mute) return;
  for (TSNode k : python::ts::named_children(n)) value(f, is(k, "keyword_argument") ? field(k, "value") : k);
}

void Extractor::condition(const Frame& f, TSNode n) {
  TSNode c = field(n, "condition");
  if (is(c, "attribute") && types_ && !f.mute) read_attribute(f, c);
  implicit_ref(f, c, "__bool__");
}

void Extractor::loop(const Frame& f, TSNode n) {
  names_in(field(n, "left"), locals(f));
  TSNode left = field(n, "left"), right = field(n, "right");
  if (!types_ || f.fn == 0 || !is(left, "identifier")) return;
  Function& F = m_.functions[f.fn];
  std::string name = text(left), over = dotted(right);
  // `for d in [Path(a), Path(b)]` or over a name whose items the code shows.
  std::string each = element_class(right);
  if (!each.empty()) typed(F, name, "call:", each);
  else if (std::string how = is(right, "identifier") ? element_type(f.fn, over) : ""; !how.empty()) typed(F, name, "", how);
  else typed(F, name, "each:", over);
  auto strings = literal_strings(right);
  if (strings.empty() && is(right, "identifier"))
    if (auto* known = strings_of(f.fn, over)) strings = *known;
  if (!strings.empty()) F.strings[name] = std::move(strings);
}

void Extractor::implicit_calls(const Frame& f, TSNode n, std::string_view t) {
  if (!types_ || f.mute || f.fn == 0) return;
  if (t == "not_operator") implicit_ref(f, field(n, "argument"), "__bool__");
  else if (t == "boolean_operator") {
    implicit_ref(f, field(n, "left"), "__bool__");
    implicit_ref(f, field(n, "right"), "__bool__");
  } else if (t == "for_statement") {
    implicit_ref(f, field(n, "right"), "__iter__");
  } else if (t == "subscript" && !is(parent_node(), "assignment")) {
    implicit_ref(f, field(n, "value"), "__getitem__");
  } else if (t == "binary_operator" && text(field(n, "operator")) == "+") {
    implicit_ref(f, field(n, "left"), "__add__");
  }
}

void Extractor::with_item(const Frame& f, TSNode n) {
  TSNode v = field(n, "value");
  if (is(v, "as_pattern")) {
    auto kids = python::ts::named_children(v);
    if (kids.empty()) return;
    v = kids[0];
  }
  if (is(v, "call")) {
    std::string callee = dotted(field(v, "function"));
    if (!callee.empty()) add_ref(f.fn, v, callee + ".__enter__", Ref::call, true);
    implicit_ref(f, v, "__exit__");
    return;
  }
  std::string d = dotted(v);
  if (!d.empty()) add_ref(f.fn, v, std::move(d), Ref::entered);
}

}  // namespace sitepatch::audit::detail
