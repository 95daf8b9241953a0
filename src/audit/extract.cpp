// One pass over a module's syntax tree with a cursor (no recursion: sympy's deepest
// expressions would exhaust a thread's stack). This file holds the cursor and each node's
// context; extractor.hpp says where the rest of the pass lives.
#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "audit/blocks.hpp"
#include "audit/extractor.hpp"
#include "python/tree.hpp"
#include "sitepatch/audit/facts.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit {

namespace detail {

using python::ts::field;
using python::ts::is;

void Extractor::run(TSNode root) {
  TSTreeCursor c = ts_tree_cursor_new(root);
  std::vector<Frame> stack;
  stack.push_back(Frame{});
  stack.back().node = root;
  parent_ = nullptr;
  bool descend = enter(stack.back(), root);
  while (true) {
    if (descend && ts_tree_cursor_goto_first_child(&c)) {
      push(stack, c);
      parent_ = &stack[stack.size() - 2];
      descend = enter(stack.back(), ts_tree_cursor_current_node(&c));
      continue;
    }
    bool done = false;
    while (true) {
      stack.pop_back();
      if (stack.empty()) {
        done = true;
        break;
      }
      if (ts_tree_cursor_goto_next_sibling(&c)) {
        push(stack, c);
        parent_ = stack.size() >= 2 ? &stack[stack.size() - 2] : nullptr;
        descend = enter(stack.back(), ts_tree_cursor_current_node(&c));
        break;
      }
      if (!ts_tree_cursor_goto_parent(&c)) {
        done = true;
        break;
      }
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&c);
}

void Extractor::finish() {
  for (auto& [fn, bound, target] : deferred_) m_.functions[size_t(fn)].imports.emplace(bound, target);
  // An unannotated function every `return` of which makes the same thing (`return
  // NinjaSpec()`, bare returns and `return None` aside) returns that, as -> NinjaSpec
  // would say; resolve() decides whether it names a class.
  for (auto& [fn, made] : returned_)
    if (!made.empty() && made != kMixed && m_.functions[size_t(fn)].returns.empty()) {
      m_.functions[size_t(fn)].returns = made;
      m_.functions[size_t(fn)].returns_inferred = true;
    }
  for (size_t i = 0; i < m_.functions.size(); ++i) {
    auto& l = m_.functions[i].locals;
    std::sort(l.begin(), l.end());
    l.erase(std::unique(l.begin(), l.end()), l.end());
    for (auto& g : globals_[i]) {
      auto it = std::lower_bound(l.begin(), l.end(), g);
      if (it != l.end() && *it == g) l.erase(it);
    }
  }
}

std::string_view Extractor::field_name(TSTreeCursor& c) {
  const char* f = ts_tree_cursor_current_field_name(&c);
  return f ? std::string_view(f) : std::string_view();
}

void Extractor::push(std::vector<Frame>& stack, TSTreeCursor& c) {
  const Frame& p = stack.back();
  Frame f;
  f.node = ts_tree_cursor_current_node(&c);
  f.fn = p.fn;
  std::string_view fld = field_name(c);
  // An except clause's body is code again; only its exception types are muted.
  f.mute = p.mute || (p.mute_kids && !is(ts_tree_cursor_current_node(&c), "block"));
  f.raised = p.raise_kids && fld != "cause";
  f.type_only = p.type_only;
  if (p.truth != detail::Truth::unknown && !p.ternary_truth) {
    arm_truth(p.truth, fld, f);
  } else if (p.truth != detail::Truth::unknown) {
    // `a if c else b`: its arms are told by position.
    uint32_t at = ts_node_start_byte(ts_tree_cursor_current_node(&c));
    arm_truth(p.truth, at < p.truth_start ? "consequence" : at >= p.truth_end ? "alternative" : "", f);
  }
  if (p.made_fn >= 0 && fld == "body") {
    f.fn = p.made_fn;
  } else if (p.made_cls >= 0 && fld == "body") {
    f.cls = p.made_cls;
    f.in_class_body = true;
  } else if (p.cls >= 0 && p.in_class_body) {
    // Statements of a class body: definitions there are methods.
    TSNode n = ts_tree_cursor_current_node(&c);
    std::string_view t = ts_node_type(n);
    if (t == "function_definition" || t == "decorated_definition" || t == "class_definition" ||
        t == "expression_statement" || t == "assignment" || t == "augmented_assignment") {
      f.cls = p.cls;
      f.in_class_body = t != "function_definition" && t != "class_definition";
    }
  }
  stack.push_back(f);
}

void Extractor::arm_truth(detail::Truth t, std::string_view fld, Frame& f) {
  using detail::Truth;
  if (fld == "consequence") {
    f.dead = t == Truth::no;
    f.type_only = f.type_only || t == Truth::type_checking;
  } else if (fld == "alternative") {
    f.dead = t == Truth::yes;
    f.type_only = f.type_only || t == Truth::not_type_checking;
  }
}

const detail::KnownNames* Extractor::known(int fn) {
  auto module = known_.find(0);
  const detail::KnownNames* outer = module == known_.end() ? nullptr : &module->second;
  auto mine = fn == 0 ? known_.end() : known_.find(fn);
  if (mine == known_.end()) return outer;
  mine->second.outer = outer;  // the function's own names shadow the module's
  return &mine->second;
}

bool Extractor::type_only(const Frame& f, TSNode n, std::string_view t) {
  if (t == "import_statement" || t == "import_from_statement") {
    deferring_ = true;
    if (t == "import_statement") import_statement(f, n);
    else import_from(f, n);
    deferring_ = false;
    return false;
  }
  return t != "function_definition" && t != "class_definition" && t != "decorated_definition";
}

bool Extractor::enter(Frame& f, TSNode n) {
  if (f.dead) return false;
  here_ = f;
  std::string_view t = ts_node_type(n);
  if (f.type_only) return type_only(f, n, t);
  if (t == "if_statement" || t == "elif_clause") {
    f.truth = detail::static_truth(src_, field(n, "condition"), known(f.fn));
  } else if (t == "conditional_expression" && ts_node_named_child_count(n) == 3) {
    TSNode c = ts_node_named_child(n, 1);
    f.truth = detail::static_truth(src_, c, known(f.fn));
    f.ternary_truth = true;
    f.truth_start = ts_node_start_byte(c);
    f.truth_end = ts_node_end_byte(c);
  }
  if (reads_operands(t)) attribute_reads(f, n);
  else if (t == "if_statement" || t == "elif_clause" || t == "while_statement") condition(f, n);
  implicit_calls(f, n, t);
  switch (t[0]) {
    case 'c':
      if (t == "call") call(f, n);
      else if (t == "class_definition") class_definition(f, n);
      else if (t == "comment" || t == "concatenated_string") return t != "comment";
      return true;
    case 'f':
      if (t == "function_definition") function_definition(f, n);
      else if (t == "for_statement" || t == "for_in_clause") loop(f, n);
      else if (t == "future_import_statement") return false;
      return true;
    case 'i':
      if (t == "import_statement") import_statement(f, n);
      else if (t == "import_from_statement") import_from(f, n);
      else if (t == "identifier" || t == "integer") return false;
      else return true;
      return false;
    case 'd':
      if (t == "decorated_definition") decorated(n);
      return true;
    case 'a':
      if (t == "assignment") assignment(f, n);
      else if (t == "augmented_assignment" && !f.in_class_body) {
        names_in(field(n, "left"), locals(f));
        if (f.fn == 0 && text(field(n, "left")) == "__all__") exports(field(n, "right"), true);
      }
      else if (t == "argument_list") arguments(f, n);
      else if (t == "as_pattern") names_in(field(n, "alias"), locals(f));
      return true;
    case 'e':
      if (t == "except_clause" || t == "except_group_clause") {
        names_in(field(n, "alias"), locals(f));
        f.mute_kids = true;
      }
      return true;
    case 'E':  // tree-sitter's node types are lower case but this one
      if (t == "ERROR") ++m_.syntax_errors;
      return true;
    case 'n':
      if (t == "named_expression") names_in(field(n, "name"), locals(f));
      else if (t == "nonlocal_statement") return false;
      return true;
    case 'g':
      if (t == "global_statement") {
        for (TSNode k : python::ts::named_children(n)) globals_[f.fn].insert(text(k));
        return false;
      }
      return true;
    case 'l':
      if (t == "lambda") parameters(field(n, "parameters"), locals(f));
      else if (t == "list") elements(f, n);
      return true;
    case 'r':
      if (t == "return_statement") {
        if (types_ && f.fn > 0) note_return(f.fn, n);
        for (TSNode k : python::ts::named_children(n)) {
          if (is(k, "expression_list")) elements(f, k);
          else value(f, k);
        }
      } else if (t == "raise_statement") {
        f.raise_kids = true;
      }
      return true;
    case 't':
      if (t == "tuple") elements(f, n);
      else if (t == "type") f.mute_kids = true;  // an annotation names types, it runs nothing
      return true;
    case 'w':
      if (t == "with_item") with_item(f, n);
      return true;
    case 's':
      if (t == "set") elements(f, n);
      return true;
    case 'p':
      if (t == "pair") value(f, field(n, "value"));
      return true;
    default:
      return true;
  }
}

}  // namespace detail

bool Function::is_local(const std::string& name) const {
  return std::binary_search(locals.begin(), locals.end(), name);
}

std::string absolute_module(const std::string& module, bool is_package, int level, const std::string& rest) {
  if (level == 0) return rest;
  auto parts = util::split(module, '.');
  if (!is_package && !parts.empty()) parts.pop_back();
  for (int i = 1; i < level; ++i) {
    if (parts.empty()) return "";
    parts.pop_back();
  }
  if (parts.empty()) return "";
  std::string base = util::join(parts, ".");
  return rest.empty() ? base : base + "." + rest;
}

ModuleFacts extract(std::string_view source, const std::string& module, bool is_package, bool types) {
  ModuleFacts m;
  m.name = module;
  m.is_package = is_package;
  m.typed = types;
  detail::Extractor x(source, m, types);
  {
    python::ts::Tree tree(source, module);
    x.run(tree.root());
  }
  x.finish();
  return m;
}

namespace detail {

// A block whose tree is worth handing back to the system once freed (tens of MB).
constexpr uint32_t kLargeBlock = 64 * 1024;

ModuleFacts extract_blocks(std::string_view source, const std::string& module, bool is_package,
                           const std::vector<Block>& blocks, util::ByteBudget* budget, bool& damaged,
                           bool types) {
  ModuleFacts m;
  m.name = module;
  m.is_package = is_package;
  m.typed = types;
  Extractor x(source, m, types);
  damaged = false;
  for (const Block& b : blocks) {
    TSRange r{{b.row, 0}, {b.end_row, b.end_column}, b.begin, b.end};
    // The tree is what costs memory (about a hundred times the text): one block's at
    // a time here, and across threads no more than the budget allows.
    util::ByteBudget::Lease lease = budget ? budget->take(b.end - b.begin) : util::ByteBudget::Lease{};
    {
      python::ts::Tree tree(source, r, module);
      // The caller reads the whole file instead: the blocks after this one would be
      // parsed for nothing (and out of the file's one parse budget).
      if (ts_node_has_error(tree.root())) {
        damaged = true;
        return m;
      }
      x.run(tree.root());
    }
    if (b.end - b.begin >= kLargeBlock) util::return_freed_memory();
  }
  x.finish();
  return m;
}

}  // namespace detail

}  // namespace sitepatch::audit
