// Arguments and results as the source shows them, for assume_constant_result (see
// constancy.hpp). Conservative: what is not plainly a constant is `other` or `unknown`.
#include "sitepatch/python/constancy.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "python/constancy_guards.hpp"
#include "python/definitions.hpp"
#include "python/tree.hpp"

namespace sitepatch::python {

namespace {

using ts::field;
using ts::is;

// torch's dtypes and the like: attributes dynamo holds as constants.
const std::set<std::string> kTorchConstants = {
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16", "int32", "int64",
    "uint8", "bool", "long", "int", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "complex64", "complex128", "uint16", "uint32", "uint64", "float4_e2m1fn_x2"};

// Builtins and library calls whose result is a value dynamo holds (str, int, a dict
// of JSON values).
const std::set<std::string> kHoldableCalls = {
    "int", "float", "str", "bool", "len", "tuple", "round", "abs", "min", "max", "sum", "hash", "repr",
    "json.load", "json.loads", "os.getenv", "os.environ.get", "os.path.join", "os.path.basename",
    "os.path.dirname", "os.path.exists", "os.path.isfile", "os.path.isdir", "platform.system",
    "platform.machine", "sys.platform", "dict", "list", "sorted", "divmod", "ord", "chr", "torch.device"};

// Annotations naming a value dynamo holds.
const std::set<std::string> kHoldableTypes = {"str", "int", "float", "bool", "None", "tuple", "list", "dict",
                                              "Tuple", "List", "Dict", "Optional", "typing.Tuple", "typing.List",
                                              "typing.Dict", "typing.Optional", "torch.dtype", "torch.device",
                                              "bytes", "Literal", "typing.Literal"};

// Methods of str (and of the containers) whose result is again such a value.
const std::set<std::string> kHoldableMethods = {"strip", "lstrip", "rstrip", "split", "rsplit", "lower", "upper",
                                                "replace", "format", "join", "startswith", "endswith", "get",
                                                "partition", "rpartition", "splitlines", "count", "find", "keys",
                                                "values", "items", "copy", "encode", "decode"};

// Pushes `n`'s named children on `todo` last first (so they pop in order): with a
// cursor, as ts_node_named_child(n, k) walks the first k children again each time.
void push_children(std::vector<TSNode>& todo, TSNode n) {
  auto kids = ts::named_children(n);
  todo.insert(todo.end(), kids.rbegin(), kids.rend());
}

// Containers nested deeper than this hold a value read as unknown (packages nest a few).
constexpr int kDeepestContainer = 64;

class Reader {
 public:
  Reader(std::string_view src, TSNode root) : src_(src), defs_(root, src) {
    // A module-level name assigned once: a constant when its value is one.
    std::map<std::string, int> count;
    for (const Def& d : defs_.all())
      if (d.kind == recipe::TargetKind::variable && d.qualified.find('.') == std::string::npos) ++count[d.qualified];
    for (const Def& d : defs_.all())
      if (d.kind == recipe::TargetKind::variable && count[d.qualified] == 1 && !ts_node_is_null(d.value))
        module_values_[d.qualified] = d.value;
  }

  std::string text(TSNode n) const { return std::string(ts::text(src_, n)); }

  const Def* function(const std::string& qualified) const {
    const auto* found = defs_.find(qualified);
    if (!found) return nullptr;
    for (size_t i : *found)
      if (defs_.all()[i].kind == recipe::TargetKind::function) return &defs_.all()[i];
    return nullptr;
  }

  // The innermost function holding `line`.
  const Def* function_at(int line) const {
    const Def* best = nullptr;
    for (const Def& d : defs_.all()) {
      if (d.kind != recipe::TargetKind::function) continue;
      int first = ts::line(d.outer), last = int(ts_node_end_point(d.node).row) + 1;
      if (line < first || line > last) continue;
      if (!best || ts_node_start_byte(d.node) > ts_node_start_byte(best->node)) best = &d;
    }
    return best;
  }

  bool is_method(const Def& d) const {
    for (TSNode p = ts_node_parent(d.outer); !ts_node_is_null(p); p = ts_node_parent(p)) {
      if (is(p, "class_definition")) return true;
      if (is(p, "function_definition")) return false;
    }
    return false;
  }

  // Parameters in order, with whether each default is a constant.
  void parameters(TSNode fn, std::vector<std::string>& names, std::map<std::string, bool>* defaults,
                  std::map<std::string, std::string>* annotations = nullptr) const {
    for (TSNode p : ts::named_children(field(fn, "parameters"))) {
      std::string_view t = ts_node_type(p);
      std::string name;
      TSNode value{};
      if (t == "identifier") {
        name = text(p);
      } else if (t == "typed_parameter") {
        for (TSNode c : ts::named_children(p))
          if (is(c, "identifier")) {
            name = text(c);
            break;
          } else if (is(c, "list_splat_pattern") || is(c, "dictionary_splat_pattern")) {
            name = (is(c, "list_splat_pattern") ? "*" : "**") + text(ts_node_named_child(c, 0));
            break;
          }
      } else if (t == "default_parameter" || t == "typed_default_parameter") {
        name = text(field(p, "name"));
        value = field(p, "value");
      } else if (t == "list_splat_pattern") {
        name = "*" + text(ts_node_named_child(p, 0));
      } else if (t == "dictionary_splat_pattern") {
        name = "**" + text(ts_node_named_child(p, 0));
      } else {
        continue;  // `*`, `/`
      }
      if (name.empty()) continue;
      names.push_back(name);
      if (defaults && !ts_node_is_null(value)) (*defaults)[name] = constant(value, {}, 0);
      if (annotations && (t == "typed_parameter" || t == "typed_default_parameter"))
        (*annotations)[name] = text(field(p, "type"));
    }
  }

  // Whether `n` is a value fixed when the module is imported; a name in `params` is no
  // constant here (the caller asks about parameters separately).
  bool constant(TSNode n, const std::set<std::string>& params, int depth, bool frozen = false) const {
    if (ts_node_is_null(n) || depth > 4) return false;
    std::string_view t = ts_node_type(n);
    // A module's list, dict or set may be filled after import: no constant.
    if (frozen && (t == "list" || t == "dictionary" || t == "set")) return false;
    if (t == "integer" || t == "float" || t == "true" || t == "false" || t == "none" || t == "ellipsis")
      return true;
    if (t == "string") {
      for (TSNode c : ts::named_children(n))
        if (is(c, "interpolation")) return false;
      return true;
    }
    if (t == "concatenated_string" || t == "tuple" || t == "list" || t == "set" || t == "parenthesized_expression" ||
        t == "expression_list") {
      for (TSNode c : ts::named_children(n))
        if (!is(c, "comment") && !constant(c, params, depth + 1, frozen)) return false;
      return true;
    }
    if (t == "dictionary") {
      for (TSNode pair : ts::named_children(n)) {
        if (is(pair, "comment")) continue;
        if (!is(pair, "pair") || !constant(field(pair, "key"), params, depth + 1) ||
            !constant(field(pair, "value"), params, depth + 1))
          return false;
      }
      return true;
    }
    if (t == "unary_operator") return constant(field(n, "argument"), params, depth + 1);
    if (t == "binary_operator")
      return constant(field(n, "left"), params, depth + 1) && constant(field(n, "right"), params, depth + 1);
    if (t == "attribute") {
      TSNode obj = field(n, "object");
      return is(obj, "identifier") && text(obj) == "torch" && kTorchConstants.count(text(field(n, "attribute")));
    }
    if (t == "identifier") {
      std::string name = text(n);
      if (params.count(name)) return false;
      auto v = module_values_.find(name);
      return v != module_values_.end() && constant(v->second, {}, depth + 1, true);
    }
    return false;
  }

  // What dynamo guards and holds as a constant (constancy_guards.cpp).
  bool guarded(TSNode n, TSNode fn, std::vector<std::string>* keys) const {
    return guards::guarded(src_, n, fn, [this](TSNode c) { return constant(c, {}, 1); }, keys);
  }
  std::vector<std::string> locals_of(TSNode fn) const { return guards::locals_of(src_, fn); }

  ArgumentFacts argument(const std::string& slot, TSNode value, const std::set<std::string>& params, TSNode fn) const {
    ArgumentFacts a;
    a.slot = slot;
    a.text = text(value);
    if (is(value, "identifier") && params.count(a.text)) a.kind = ArgumentFacts::parameter;
    else if (constant(value, params, 0)) a.kind = ArgumentFacts::constant;
    else if (guarded(value, fn, &a.guards)) a.kind = ArgumentFacts::guarded;
    return a;
  }

  CallFacts call(TSNode c, const std::set<std::string>& params, TSNode fn) const {
    CallFacts out;
    out.line = ts::line(c);
    out.callee = text(field(c, "function"));
    TSNode args = field(c, "arguments");
    if (!is(args, "argument_list")) {
      // f(x for x in y): one generator
      out.args.push_back({"#0", ArgumentFacts::other, text(args), {}});
      return out;
    }
    int position = 0;
    for (TSNode a : ts::named_children(args)) {
      if (is(a, "comment")) continue;
      if (is(a, "keyword_argument"))
        out.args.push_back(argument(text(field(a, "name")), field(a, "value"), params, fn));
      else if (is(a, "list_splat") || is(a, "dictionary_splat")) out.spread = true;
      else out.args.push_back(argument("#" + std::to_string(position++), a, params, fn));
    }
    return out;
  }

  // Calls to `callee` inside `scope`, not inside the functions, lambdas and classes
  // it defines (they run when called, not here); on `only_line` alone when not 0.
  void calls_of(TSNode scope, const std::string& callee, const std::set<std::string>& params, int only_line,
                std::vector<CallFacts>& out) const {
    std::vector<TSNode> todo;
    push_children(todo, scope);
    if (is(scope, "function_definition")) todo = {field(scope, "body")};
    while (!todo.empty()) {
      TSNode n = todo.back();
      todo.pop_back();
      // A lambda on a module-level line is what that line runs (torch.compile(lambda x: ...)).
      if (ts_node_is_null(n) || is(n, "function_definition") || (is(n, "lambda") && only_line == 0) ||
          is(n, "class_definition") || is(n, "decorated_definition"))
        continue;
      if (is(n, "call") && (only_line == 0 || ts::line(n) == only_line)) {
        std::string name = text(field(n, "function"));
        size_t dot = name.rfind('.');
        if ((dot == std::string::npos ? name : name.substr(dot + 1)) == callee)
          out.push_back(call(n, params, is(scope, "function_definition") ? scope : TSNode{}));
      }
      push_children(todo, n);
    }
    std::sort(out.begin(), out.end(), [](const CallFacts& a, const CallFacts& b) { return a.line < b.line; });
  }

  ResultFacts result(const Def& d, int depth) const {
    ResultFacts r;
    TSNode annotation = field(d.node, "return_type");
    if (!ts_node_is_null(annotation)) {
      std::string a = text(annotation);
      std::string head = a.substr(0, a.find('['));
      if (tensor_annotation(a)) return {ResultFacts::tensor, "annotated -> " + a};
      if (kHoldableTypes.count(head)) return {ResultFacts::holdable, "annotated -> " + a};
      if (!head.empty() && std::isupper(static_cast<unsigned char>(head[head.rfind('.') == std::string::npos ? 0 : head.rfind('.') + 1])))
        return {ResultFacts::object, "returns a " + head + " object (annotated -> " + a + ")"};
    }
    std::vector<TSNode> returns;
    collect_returns(field(d.node, "body"), returns);
    std::set<std::string> params;
    std::vector<std::string> names;
    parameters(d.node, names, nullptr);
    params.insert(names.begin(), names.end());
    bool all_holdable = true;
    std::string unknown_why;
    for (TSNode ret : returns) {
      TSNode value = ts_node_named_child_count(ret) ? ts_node_named_child(ret, 0) : TSNode{};
      ResultFacts v = value_facts(value, d, params, depth);
      if (v.kind == ResultFacts::object) return v;
      if (v.kind == ResultFacts::unknown) {
        all_holdable = false;
        if (unknown_why.empty()) unknown_why = v.why;
      }
    }
    if (returns.empty()) return {ResultFacts::holdable, "returns None"};
    if (all_holdable && returns.size() == 1)
      return value_facts(ts_node_named_child_count(returns[0]) ? ts_node_named_child(returns[0], 0) : TSNode{}, d,
                         params, depth);
    if (all_holdable) return {ResultFacts::holdable, "every return gives a constant dynamo can hold"};
    return {ResultFacts::unknown, unknown_why};
  }

  // The size of the tuple every return gives, 0 when they do not all give one of a size.
  // Whether a return annotation says tensors: `Tensor` as a whole word anywhere in it
  // (torch.Tensor, Tuple[Tensor, Tensor], Optional[torch.Tensor], list[Tensor]).
  static bool tensor_annotation(const std::string& a) {
    for (size_t at = a.find("Tensor"); at != std::string::npos; at = a.find("Tensor", at + 1)) {
      bool start = at == 0 || !(std::isalnum(static_cast<unsigned char>(a[at - 1])) || a[at - 1] == '_');
      size_t end = at + 6;
      bool stop = end == a.size() || !(std::isalnum(static_cast<unsigned char>(a[end])) || a[end] == '_');
      if (start && stop) return true;
    }
    return false;
  }

  // The items of a tuple annotation (`Tuple[Tensor, Tensor]`, `tuple[Tensor, ...]` is
  // not one), 0 when it is no such tuple.
  int annotated_tuple(const Def& d) const {
    TSNode annotation = field(d.node, "return_type");
    if (ts_node_is_null(annotation)) return 0;
    std::string a = text(annotation);
    size_t open = a.find('[');
    std::string head = a.substr(0, open);
    if (open == std::string::npos || a.back() != ']' ||
        (head != "Tuple" && head != "tuple" && head != "typing.Tuple") || a.find("...") != std::string::npos)
      return 0;
    int depth = 0, items = 1;
    for (size_t i = open + 1; i + 1 < a.size(); ++i) {
      char c = a[i];
      if (c == '[' || c == '(') ++depth;
      else if (c == ']' || c == ')') --depth;
      else if (c == ',' && depth == 0) ++items;
    }
    return items;
  }

  int tuple_size(const Def& d) const {
    if (int n = annotated_tuple(d)) return n;
    std::vector<TSNode> returns;
    collect_returns(field(d.node, "body"), returns);
    int size = 0;
    for (TSNode ret : returns) {
      TSNode v = ts_node_named_child_count(ret) ? ts_node_named_child(ret, 0) : TSNode{};
      if (!is(v, "expression_list") && !is(v, "tuple")) return 0;
      int n = 0;
      for (TSNode c : ts::named_children(v)) n += !is(c, "comment");
      if (size && n != size) return 0;
      size = n;
    }
    return size;
  }

 private:
  static void collect_returns(TSNode n, std::vector<TSNode>& out) {
    if (ts_node_is_null(n)) return;
    std::vector<TSNode> todo = {n};
    while (!todo.empty()) {
      TSNode c = todo.back();
      todo.pop_back();
      if (is(c, "return_statement")) {
        out.push_back(c);
        continue;
      }
      if (is(c, "function_definition") || is(c, "lambda") || is(c, "class_definition") ||
          is(c, "decorated_definition"))
        continue;
      push_children(todo, c);
    }
  }

  // The last assignment of `name` in `d`'s body before nothing else: its value. Kept
  // per name: each is a walk of the whole body, asked for every name a value holds.
  TSNode assigned(const Def& d, const std::string& name) const {
    auto key = std::make_pair(ts_node_start_byte(d.node), name);
    if (auto it = assigned_.find(key); it != assigned_.end()) return it->second;
    return assigned_[key] = find_assigned(d, name);
  }

  TSNode find_assigned(const Def& d, const std::string& name) const {
    TSNode found{};
    std::vector<TSNode> todo = {field(d.node, "body")};
    while (!todo.empty()) {
      TSNode c = todo.back();
      todo.pop_back();
      if (ts_node_is_null(c) || is(c, "function_definition") || is(c, "lambda") || is(c, "class_definition")) continue;
      if (is(c, "assignment") && is(field(c, "left"), "identifier") && text(field(c, "left")) == name) {
        if (!ts_node_is_null(found)) return TSNode{};  // assigned twice: which one is returned is not known here
        found = field(c, "right");
      }
      push_children(todo, c);
    }
    return found;
  }

  bool is_class(const std::string& name) const {
    std::string last = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    if (const auto* f = defs_.find(name))
      for (size_t i : *f)
        if (defs_.all()[i].kind == recipe::TargetKind::class_) return true;
    return !last.empty() && std::isupper(static_cast<unsigned char>(last[0])) &&
           !std::all_of(last.begin(), last.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) || c == '_' || std::isdigit(static_cast<unsigned char>(c)); });
  }

  // `nest`: containers around `v` (each item is read in turn; past kDeepestContainer
  // the value is unknown, so nesting never runs as deep as a text can nest).
  ResultFacts value_facts(TSNode v, const Def& d, const std::set<std::string>& params, int depth,
                          int nest = 0) const {
    if (ts_node_is_null(v)) return {ResultFacts::holdable, "returns None"};
    // The first 60 bytes only: copying the whole text at every level of `((((x))))`
    // made deep nesting quadratic.
    std::string_view all = ts::text(src_, v);
    std::string what(all.substr(0, 61));
    if (what.size() > 60) what = what.substr(0, 57) + "...";
    if (nest > kDeepestContainer) return {ResultFacts::unknown, "returns " + what + " (nested too deep to read)"};
    std::string_view t = ts_node_type(v);
    if (constant(v, params, 0)) return {ResultFacts::holdable, "returns " + what};
    if (t == "comparison_operator" || t == "boolean_operator" || t == "not_operator")
      return {ResultFacts::holdable, "returns a bool (" + what + ")"};
    if (t == "string") return {ResultFacts::holdable, "returns a str"};  // an f-string
    if (t == "tuple" || t == "list" || t == "parenthesized_expression" || t == "dictionary") {
      ResultFacts worst{ResultFacts::holdable, "returns " + what};
      std::vector<TSNode> items;
      for (TSNode c : ts::named_children(v)) {
        if (is(c, "pair")) {
          items.push_back(field(c, "key"));
          items.push_back(field(c, "value"));
        } else if (!is(c, "comment")) {
          items.push_back(c);
        }
      }
      for (TSNode c : items) {
        ResultFacts f = value_facts(c, d, params, depth, nest + 1);
        if (f.kind == ResultFacts::object) return f;
        if (f.kind == ResultFacts::unknown) worst = f;
      }
      return worst;
    }
    if (t == "identifier" && depth < 3) {
      TSNode a = assigned(d, text(v));
      if (!ts_node_is_null(a)) return value_facts(a, d, params, depth + 1);
    }
    if (t == "call") {
      std::string callee = text(field(v, "function"));
      // `subprocess.run([...], ...).stdout.strip` reads as `....stdout.strip`.
      std::string shown = callee.size() > 40 ? "..." + callee.substr(callee.rfind('.', callee.size() - 20)) : callee;
      if (kHoldableCalls.count(callee)) return {ResultFacts::holdable, "returns " + callee + "(...)"};
      if (is(field(v, "function"), "attribute")) {
        std::string method = text(field(field(v, "function"), "attribute"));
        if (kHoldableMethods.count(method) && is(field(field(v, "function"), "object"), "string"))
          return {ResultFacts::holdable, "returns a str"};
      }
      if (is_class(callee)) return {ResultFacts::object, "returns a " + callee + " object"};
      if (callee.find('.') == std::string::npos && depth < 3)
        if (const Def* f = function(callee)) {
          ResultFacts inner = result(*f, depth + 1);
          if (inner.kind != ResultFacts::unknown)
            return {inner.kind, inner.kind == ResultFacts::object ? inner.why + " (through " + callee + ")"
                                                                  : "returns " + callee + "(...), which " + inner.why};
        }
      if (callee == "importlib.import_module" || callee == "__import__")
        return {ResultFacts::object, "returns a module"};
      return {ResultFacts::unknown, "returns " + shown + "(...), whose type is not known here"};
    }
    return {ResultFacts::unknown, "returns " + what + ", whose type is not known here"};
  }

  std::string_view src_;
  mutable std::map<std::pair<uint32_t, std::string>, TSNode> assigned_;  // by def and name
  Definitions defs_;
  std::map<std::string, TSNode> module_values_;
};

}  // namespace

struct SourceFacts::Parsed {
  explicit Parsed(std::string s) : text(std::move(s)), tree(text), reader(text, tree.root()) {}
  std::string text;
  ts::Tree tree;
  Reader reader;
};

SourceFacts::SourceFacts(std::string source) : p_(std::make_unique<Parsed>(std::move(source))) {}
SourceFacts::~SourceFacts() = default;

FunctionFacts SourceFacts::function(const std::string& qualified) const {
  FunctionFacts out;
  const Reader& r = p_->reader;
  const Def* d = r.function(qualified);
  if (!d) return out;
  out.found = true;
  out.method = r.is_method(*d);
  r.parameters(d->node, out.params, &out.default_constant, &out.annotations);
  out.result = r.result(*d, 0);
  out.returns_tuple = r.tuple_size(*d);
  return out;
}

CallsIn SourceFacts::calls_in(int line, const std::string& callee) const {
  CallsIn out;
  const Reader& r = p_->reader;
  const Def* d = r.function_at(line);
  std::set<std::string> params;
  if (d) {
    out.caller = d->qualified;
    r.parameters(d->node, out.caller_params, nullptr);
    for (auto& p : out.caller_params) params.insert(p);
    r.calls_of(d->node, callee, params, 0, out.calls);
    out.caller_locals = r.locals_of(d->node);
  } else {
    r.calls_of(p_->tree.root(), callee, params, line, out.calls);
  }
  return out;
}

const std::string& SourceFacts::text() const { return p_->text; }

std::vector<std::string> SourceFacts::callees_at(int line) const {
  std::vector<std::string> out;
  std::vector<TSNode> todo = {p_->tree.root()};
  while (!todo.empty()) {
    TSNode n = todo.back();
    todo.pop_back();
    if (ts_node_is_null(n) || int(ts_node_start_point(n).row) + 1 > line || int(ts_node_end_point(n).row) + 1 < line)
      continue;
    if (ts_node_type(n) == std::string_view("call") && int(ts_node_start_point(n).row) + 1 == line)
      out.push_back(std::string(ts::text(p_->text, ts_node_child_by_field_name(n, "function", 8))));
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) todo.push_back(ts_node_named_child(n, i));
  }
  return out;
}

FunctionFacts function_facts(std::string_view source, const std::string& qualified) {
  return SourceFacts(std::string(source)).function(qualified);
}

CallsIn calls_in(std::string_view source, int line, const std::string& callee) {
  return SourceFacts(std::string(source)).calls_in(line, callee);
}

}  // namespace sitepatch::python
