// Lowering, part five: what annotations say a value is (a class, an Optional of a
// collection, `List[X]`'s items), and a dataclass field's default factory.
#include "audit/flow/lowerer.hpp"

namespace sitepatch::audit::flow::detail {

using python::ts::field;
using python::ts::is;
using python::ts::named_children;

// A class body's `x = field(default_factory=f)` (dataclasses.field, attr.ib(factory=f),
// pydantic's Field): the class's generated __init__ calls f.
void Lowerer::field_factory(Var made) {
  const auto& code = m_.scopes[size_t(cur().scope)].code;
  for (auto it = code.rbegin(); it != code.rend(); ++it) {
    if (it->dst != made) continue;
    if (it->op != Op::call) return;
    const Call& c = m_.calls[size_t(it->index)];
    std::string last = c.text.substr(c.text.rfind('.') == std::string::npos ? 0 : c.text.rfind('.') + 1);
    if (last != "field" && last != "Field" && last != "ib" && last != "attrib") return;
    for (const Arg& a : c.args)
      if (a.keyword == "default_factory" || a.keyword == "factory")
        m_.classes[size_t(cur().cls)].factories.push_back(a.var);
    return;
  }
}

Var Lowerer::annotation(TSNode n) {
  // The annotation's classes, as a value the solver makes instances of: X, "X",
  // Optional[X], X | None, Union[X, Y], list[X] (an item), type[X] (the class itself).
  if (is(n, "type") && !named_children(n).empty()) return annotation(named_children(n)[0]);
  // List[Path], dict[str, Path]: a collection of instances. Optional[X] and other forms stay
  // unknown here: on torch, every Optional[Module] parameter holding an instance sent calls
  // to every override (serialization.load: 5 s and 300 MB against 1 s and 77 MB).
  if (is(n, "generic_type") && !named_children(n).empty() &&
      generic_collection("typing." + text(named_children(n)[0]).substr(text(named_children(n)[0]).rfind('.') + 1)))
    return generic_type(n);
  if (auto inner = optional_collection(n)) return annotation(*inner);
  if (is(n, "string")) {
    auto s = python::ts::plain_string(src_, n);
    Instr in = at(Op::unknown, n);
    in.dst = fresh();
    if (!s) return emit(std::move(in));
    in.op = Op::import_from;  // a dotted name read in this scope: the solver looks it up
    in.name = "<annotation>";
    in.name2 = *s;
    return emit(std::move(in));
  }
  return expr(n);
}

// Optional[List[Path]], Union[Dict[str, Path], None], List[Path] | None: the collection
// the value is whenever it is not None (an Optional of one class stays unknown, above).
std::optional<TSNode> Lowerer::optional_collection(TSNode n) const {
  std::vector<TSNode> members;
  auto kids = named_children(n);
  if (is(n, "generic_type") && !kids.empty() && (text(kids[0]) == "Optional" || text(kids[0]) == "Union")) {
    for (TSNode k : kids)
      if (is(k, "type_parameter"))
        for (TSNode t : named_children(k)) members.push_back(t);
  } else if (is(n, "union_type")) {
    members = kids;
  }
  std::optional<TSNode> one;
  for (TSNode t : members) {
    if (is(t, "comment") || text(t) == "None") continue;
    if (one) return std::nullopt;
    one = t;
  }
  if (!one) return std::nullopt;
  TSNode inner = *one;
  if (is(inner, "type") && !named_children(inner).empty()) inner = named_children(inner)[0];
  auto head = named_children(inner);
  if (!is(inner, "generic_type") || head.empty() ||
      !generic_collection("typing." + text(head[0]).substr(text(head[0]).rfind('.') + 1)))
    return std::nullopt;
  return inner;
}

// List[Path], Dict[str, Path] in an annotation (tree-sitter's generic_type): the generic
// read with its arguments as a subscript, several of them as one tuple.
Var Lowerer::generic_type(TSNode n) {
  auto kids = named_children(n);
  if (kids.empty()) return constant("unknown", n);
  Instr in = at(Op::load_item, n);
  in.a = expr(kids[0]);
  Container args;
  args.kind = Container::tuple;
  for (TSNode k : kids)
    if (is(k, "type_parameter"))
      for (TSNode t : named_children(k)) {
        if (is(t, "comment")) continue;
        args.items.push_back(annotation(t));
        args.keys.push_back({});
        args.key_vars.push_back(kNoVar);
        args.starred.push_back(0);
      }
  if (args.items.size() == 1) {
    in.b = args.items[0];
  } else {
    Instr mk = at(Op::make_list, n);
    mk.index = int32_t(m_.containers.size());
    m_.containers.push_back(std::move(args));
    mk.dst = fresh();
    in.b = emit(std::move(mk));
  }
  in.dst = fresh();
  return emit(std::move(in));
}

}  // namespace sitepatch::audit::flow::detail
