// The readings of one node: see node_reader.hpp.
#include "audit/node_reader.hpp"

#include <algorithm>
#include <set>

#include "python/tree.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::detail {

using python::ts::field;
using python::ts::is;

bool wraps_function(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  std::string_view last = dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
  return last == "cache" || last == "lru_cache" || last == "partial" || last == "wraps" ||
         last == "update_wrapper" || last == "cached_property" || last == "singledispatch" ||
         last == "partialmethod";
}

std::string NodeReader::text(TSNode n) const { return std::string(python::ts::text(src_, n)); }

std::string NodeReader::dotted(TSNode n) const {
  // Down the chain to its head, then the names in order: a loop, not recursion (a chain
  // of 40,000 links overflowed the stack), and each byte copied once (joining at every
  // link made a long chain quadratic).
  std::vector<TSNode> links;
  while (is(n, "attribute")) {
    links.push_back(field(n, "attribute"));
    n = field(n, "object");
  }
  if (!is(n, "identifier")) return "";
  std::string out = text(n);
  for (size_t k = links.size(); k-- > 0;) {
    out += '.';
    out += python::ts::text(src_, links[k]);
  }
  return out;
}

bool NodeReader::leaves(TSNode block) {
  uint32_t count = ts_node_named_child_count(block);
  for (uint32_t k = count; k-- > 0;) {
    TSNode last = ts_node_named_child(block, k);
    if (is(last, "comment")) continue;
    return is(last, "return_statement") || is(last, "raise_statement") || is(last, "continue_statement") ||
           is(last, "break_statement");
  }
  return false;
}

std::string NodeReader::argument_values(TSNode args) const {
  std::string out;
  int position = 0;
  auto of = [&](TSNode v) -> std::string {
    v = path_base(v);  // `base / "cache"` is what base is
    if (is(v, "call"))
      if (std::string d = dotted(field(v, "function")); !d.empty()) return "call:" + d;
    if (std::string d = dotted(v); !d.empty()) return "of:" + d;
    return "";
  };
  for (TSNode a : python::ts::named_children(args)) {
    if (is(a, "comment")) continue;
    if (is(a, "list_splat") || is(a, "dictionary_splat")) break;  // positions past it are not known
    std::string slot, v;
    if (is(a, "keyword_argument")) {
      slot = text(field(a, "name"));
      v = of(field(a, "value"));
    } else {
      slot = "#" + std::to_string(position++);
      v = of(a);
    }
    if (!v.empty()) out += (out.empty() ? "" : " ") + slot + "=" + v;
  }
  return out;
}

std::string NodeReader::type_name(TSNode type, bool class_itself) const {
  if (ts_node_is_null(type)) return "";
  std::string t = text(type);
  std::string out;
  for (char c : t)
    if (c != ' ' && c != '\'' && c != '"' && c != '\n') out += c;
  for (const char* wrap : {"Optional[", "typing.Optional[", "Union[", "typing.Union["}) {
    std::string w = wrap;
    if (out.size() > w.size() && out.compare(0, w.size(), w) == 0 && out.back() == ']') {
      out = out.substr(w.size(), out.size() - w.size() - 1);
      break;
    }
  }
  // `-> type[X]`: the class itself, whose static and class methods are X's (or a
  // subclass's, as for an instance the annotation names). Not for a local or a
  // parameter: what calling it makes is an X, and the assignments say which.
  for (const char* wrap : {"type[", "Type[", "typing.Type["}) {
    if (!class_itself) break;
    std::string w = wrap;
    if (out.size() > w.size() && out.compare(0, w.size(), w) == 0 && out.back() == ']') {
      out = out.substr(w.size(), out.size() - w.size() - 1);
      break;
    }
  }
  std::string one;
  for (auto& part : util::split(out, out.find('|') != std::string::npos ? '|' : ',')) {
    if (part == "None") continue;
    if (!one.empty()) return "";
    one = part;
  }
  for (char c : one)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.')) return "";
  return one;
}

std::string NodeReader::element_type_name(TSNode type) const {
  if (ts_node_is_null(type)) return "";
  std::string out;
  for (char c : text(type))
    if (c != ' ' && c != '\'' && c != '"' && c != '\n') out += c;
  for (const char* wrap : {"Optional[", "typing.Optional["}) {
    std::string w = wrap;
    if (out.size() > w.size() && out.compare(0, w.size(), w) == 0 && out.back() == ']')
      out = out.substr(w.size(), out.size() - w.size() - 1);
  }
  for (const char* none : {"|None", "None|"})
    if (size_t at = out.find(none); at != std::string::npos) out.erase(at, 5);
  size_t open = out.find('[');
  if (open == std::string::npos || out.back() != ']') return "";
  std::string outer = out.substr(0, open);
  outer = outer.substr(outer.rfind('.') + 1);
  static const std::set<std::string> kContainers = {"List", "list", "Sequence", "MutableSequence", "Iterable",
                                                    "Iterator", "Collection", "Set", "set", "FrozenSet",
                                                    "frozenset", "Tuple", "tuple", "AbstractSet"};
  if (!kContainers.count(outer)) return "";
  std::string inner = out.substr(open + 1, out.size() - open - 2);
  std::string first = inner.substr(0, inner.find(','));
  if ((outer == "Tuple" || outer == "tuple") && inner != first && inner != first + ",...") return "";
  for (char c : first)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.')) return "";
  return first;
}

TSNode NodeReader::path_base(TSNode n) const {
  while (true) {
    if (is(n, "parenthesized_expression")) {
      auto kids = python::ts::named_children(n);
      if (kids.size() != 1) return n;
      n = kids[0];
    } else if (is(n, "binary_operator") && text(field(n, "operator")) == "/") {
      n = field(n, "left");
    } else {
      return n;
    }
  }
}

std::string NodeReader::made_by(TSNode value) const {
  if (ts_node_is_null(value)) return "";
  TSNode base = path_base(value);
  return is(base, "call") ? dotted(field(base, "function")) : "";
}

std::string NodeReader::literal_class(TSNode value) const {
  if (ts_node_is_null(value)) return "";
  std::string_view t = ts_node_type(value);
  if (t == "list" || t == "list_comprehension") return "list";
  if (t == "dictionary" || t == "dictionary_comprehension") return "dict";
  if (t == "set" || t == "set_comprehension") return "set";
  if (t == "tuple" || t == "expression_list") return "tuple";
  if (t == "binary_operator") {
    // `prefix + ".so"`, `"%s.so" % name`: a string literal on either side makes a str.
    // Down the left operands in a loop (`a + b + c` nests to the left: a long sum must
    // not recurse as deep); a right operand nests only as far as precedence allows.
    for (TSNode n = value; is(n, "binary_operator"); n = field(n, "left")) {
      std::string op = text(field(n, "operator"));
      if (op != "+" && op != "%") return "";
      TSNode right = field(n, "right");
      if (op == "+" && literal_class(right) == "str") return "str";
      TSNode left = field(n, "left");
      if (!is(left, "binary_operator")) return literal_class(left) == "str" ? "str" : "";
    }
    return "";
  }
  if (t == "string" || t == "concatenated_string") {
    std::string_view s = python::ts::text(src_, value);
    size_t quote = s.find_first_of("'\"");
    bool bytes = s.substr(0, quote).find_first_of("bB") != std::string_view::npos;
    return bytes ? "bytes" : "str";
  }
  return "";
}

std::string NodeReader::made_or_literal(TSNode value) const {
  std::string made = made_by(value);
  return made.empty() ? literal_class(value) : made;
}

std::string NodeReader::element_class(TSNode value) const {
  if (ts_node_is_null(value)) return "";
  std::string_view t = ts_node_type(value);
  if (t == "list_comprehension" || t == "set_comprehension" || t == "generator_expression")
    return made_or_literal(field(value, "body"));
  if (t != "list" && t != "tuple" && t != "set") return "";
  std::string common;
  for (TSNode k : python::ts::named_children(value)) {
    if (is(k, "comment")) continue;
    if (!alias_of(k).empty()) return "";  // functools.partial(f): a registry (items)
    std::string c = made_or_literal(k);
    if (c.empty() || (!common.empty() && c != common)) return "";
    common = c;
  }
  return common;
}

std::vector<std::string> NodeReader::literal_strings(TSNode value) const {
  std::vector<std::string> out;
  if (ts_node_is_null(value) || !(is(value, "list") || is(value, "tuple") || is(value, "set"))) return out;
  for (TSNode k : python::ts::named_children(value)) {
    if (is(k, "comment")) continue;
    auto s = python::ts::plain_string(src_, k);
    if (!s) return {};
    out.push_back(std::move(*s));
  }
  return out;
}

std::string NodeReader::value_steps(TSNode n, int budget) const {
  n = path_base(n);
  if (budget == 0) return "";
  // `tmp = path.parent / "x"`: a local (or parameter) is the head, its own type the start.
  if (is(n, "identifier")) return text(n);
  // `dirs[0].resolve()`: an item of a name, spelled "dirs[]" (its "dirs[]" type).
  if (is(n, "subscript") && is(field(n, "value"), "identifier")) return text(field(n, "value")) + "[]";
  if (is(n, "call")) {
    TSNode fn = field(n, "function");
    if (std::string d = dotted(fn); !d.empty()) return d + "()";
    if (!is(fn, "attribute")) return "";
    std::string inner = value_steps(field(fn, "object"), budget - 1);
    return inner.empty() ? "" : inner + "." + text(field(fn, "attribute")) + "()";
  }
  if (!is(n, "attribute")) return "";
  std::string inner = value_steps(field(n, "object"), budget - 1);
  return inner.empty() ? "" : inner + "." + text(field(n, "attribute"));
}

std::string NodeReader::item_of(TSNode n) const {
  if (!is(n, "subscript")) return "";
  std::string d = dotted(field(n, "value"));
  return d.empty() ? "" : d + ".[]";
}

std::string NodeReader::got_attribute(TSNode n) const {
  auto args = getattr_arguments(n);
  if (args.empty()) return "";
  std::string object = dotted(args[0]);
  if (object.empty()) return "";
  std::string literal = text(args[1]);
  if (is(args[1], "string") && literal.size() > 2 && (literal[0] == '"' || literal[0] == '\'')) {
    std::string name = literal.substr(1, literal.size() - 2);
    if (plain_name(name)) return object + "." + name;
  }
  return object + ".[getattr]";
}

std::vector<TSNode> NodeReader::getattr_arguments(TSNode n) const {
  if (!is(n, "call") || dotted(field(n, "function")) != "getattr") return {};
  std::vector<TSNode> args;
  for (TSNode a : python::ts::named_children(field(n, "arguments")))
    if (!is(a, "comment")) args.push_back(a);
  if (args.size() < 2 || args.size() > 3) return {};
  return args;
}

bool NodeReader::plain_name(const std::string& s) {
  return !s.empty() && !std::isdigit((unsigned char)s[0]) &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

std::string NodeReader::items(TSNode n) const {
  bool dict = is(n, "dictionary");
  if (!dict && !is(n, "list")) return "";
  std::string out;
  for (TSNode k : python::ts::named_children(n)) {
    if (is(k, "comment")) continue;
    if (dict && !is(k, "pair")) return "";
    TSNode v = dict ? field(k, "value") : k;
    std::string d = dotted(v);
    if (d.empty()) d = alias_of(v);  // `functools.partial(f, ...)` calls f
    if (d.empty()) return "";
    out += (out.empty() ? "" : ",") + d;
  }
  return out;
}

std::string NodeReader::alias_of(TSNode rhs) const {
  std::string d = dotted(rhs);
  if (!d.empty()) return d;
  if (!is(rhs, "call")) return "";
  TSNode fn = field(rhs, "function");
  std::string callee = dotted(fn);
  if (callee.empty() && is(fn, "call")) callee = dotted(field(fn, "function"));
  if (callee.empty() || !wraps_function(callee)) return "";
  for (TSNode a : python::ts::named_children(field(rhs, "arguments"))) return dotted(a);
  return "";
}

}  // namespace sitepatch::audit::detail
