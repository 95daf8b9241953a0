// One edit of a recipe: where (module or file), what (target), how (action, ensure-import).
#include <algorithm>
#include <cctype>

#include "schema.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::recipe::detail {

namespace {

const std::vector<std::string> kEditKeys = {
    "module",           "file",    "function",  "class",         "variable",
    "replace-body",     "prepend-body",         "add-decorator", "position",
    "remove-decorator", "replace-function",     "replace",       "set-value",
    "ensure-import",    "occurrence",           "insert-after",  "replace-module",
    "register-custom-op", "op-name",            "op-schema",     "insert-before", "anchor"};

const std::vector<std::pair<std::string, TargetKind>> kTargets = {
    {"function", TargetKind::function}, {"class", TargetKind::class_}, {"variable", TargetKind::variable}};

const std::vector<Action> kActions = {Action::replace_body,     Action::prepend_body,
                                      Action::add_decorator,    Action::remove_decorator,
                                      Action::replace_function, Action::replace,
                                      Action::set_value,        Action::insert_after,
                                      Action::insert_before,    Action::replace_module,
                                      Action::register_custom_op};

const char* kActionList =
    "replace-body, prepend-body, add-decorator, remove-decorator, replace-function, replace, "
    "set-value, insert-after, insert-before, replace-module, register-custom-op or ensure-import";

// Actions that change a definition (`def` or `class`), never an assignment.
bool needs_definition(Action a) {
  return a == Action::replace_body || a == Action::prepend_body || a == Action::add_decorator ||
         a == Action::remove_decorator || a == Action::replace_function || a == Action::register_custom_op;
}

// `op-name`: torch.library's "namespace::name".
bool valid_op_name(const std::string& s) {
  size_t sep = s.find("::");
  if (sep == std::string::npos || sep == 0 || sep + 2 >= s.size()) return false;
  auto ident = [](std::string_view w) {
    if (w.empty() || std::isdigit(static_cast<unsigned char>(w[0]))) return false;
    return std::all_of(w.begin(), w.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  };
  return ident(std::string_view(s).substr(0, sep)) && ident(std::string_view(s).substr(sep + 2));
}

// A relative .py path inside site-packages; "" when fine, else what is wrong.
std::string file_problem(const std::string& f) {
  if (f.find('\0') != std::string::npos) return "must not contain a NUL byte";
  if (f.find('\\') != std::string::npos) return "must use `/` between folders";
  if (util::starts_with(f, "/")) return "must be relative to site-packages";
  for (const auto& part : util::split(f, '/')) {
    if (part == "..") return "must not leave site-packages with `..`";
    if (part.empty() || part == ".") return "must not have empty or `.` path parts";
  }
  if (!util::ends_with(f, ".py")) return "must name a .py file";
  return "";
}

// `torch.compiler.disable` from "@torch.compiler.disable\n".
std::optional<std::string> decorator(const Entry& e, Problems& problems) {
  auto raw = text(e, problems);
  if (!raw) return std::nullopt;
  std::string d = util::trim(*raw);
  if (util::starts_with(d, "@")) d = util::trim(std::string_view(d).substr(1));
  if (d.empty()) {
    problems.add(e.value_mark(), "`" + e.key + "` needs a value");
    return std::nullopt;
  }
  if (d.find('\n') != std::string::npos) {
    problems.add(e.value_mark(), "`" + e.key + "` must be one decorator on one line, got " + backquoted(d) );
    return std::nullopt;
  }
  return d;
}

// `import torch` / `from a.b import C`, one statement on one line.
std::optional<std::string> import_statement(const Entry& e, Problems& problems) {
  auto raw = text(e, problems);
  if (!raw) return std::nullopt;
  std::string s = util::trim(*raw);
  bool ok = s.find('\n') == std::string::npos &&
            (util::starts_with(s, "import ") ||
             (util::starts_with(s, "from ") && s.find(" import ") != std::string::npos));
  if (!ok) {
    problems.add(e.value_mark(),
                 "`ensure-import` must be one import statement (`import x` or `from x import y`), got " +
                     backquoted(s));
    return std::nullopt;
  }
  return s;
}

// replace: {old: ..., new: ..., count: N}
void read_replace(const Entry& e, Edit& edit, Problems& problems) {
  if (!e.value.IsMap()) {
    problems.add(e.value_mark(), "`replace` must be a mapping with `old`, `new` and optional `count`, got " +
                                     describe(e.value));
    return;
  }
  auto fields = entries(e.value, {"old", "new", "count"}, problems);
  const Entry* old_e = find(fields, "old");
  const Entry* new_e = find(fields, "new");
  if (!old_e) problems.add(mark_of(e.value), "`replace` needs `old`");
  if (!new_e) problems.add(mark_of(e.value), "`replace` needs `new`");
  if (old_e) {
    if (old_e->value.IsScalar() && old_e->value.Scalar().empty())
      problems.add(old_e->value_mark(), "`old` must not be empty");
    else if (auto t = text(*old_e, problems))
      edit.old_text = *t;
  }
  if (new_e) {
    // An empty `new` deletes `old`; a missing value is more likely a slip.
    if (new_e->value.IsNull())
      problems.add(new_e->value_mark(), "`new` needs a value (write `new: \"\"` to delete `old`)");
    else if (!new_e->value.IsScalar())
      problems.add(new_e->value_mark(), "`new` must be a string, got " + describe(new_e->value));
    else
      edit.new_text = new_e->value.Scalar();
    edit.code_mark = new_e->value_mark();
  }
  if (const Entry* c = find(fields, "count"))
    if (auto n = positive_int(*c, problems)) edit.count = *n;
  if (!edit.old_text.empty() && new_e && new_e->value.IsScalar() && edit.old_text == edit.new_text)
    problems.add(mark_of(e.value), "`replace` has the same `old` and `new`");
}

// `anchor`: one statement of a function's body that insert-before/-after put code beside.
// insert-before has no other meaning, so it needs one; insert-after without one keeps its
// meaning (after the whole target).
void read_anchor(const std::vector<Entry>& fields, const Entry* action, const Entry* target, Edit& edit,
                 Problems& problems) {
  const Entry* anchor = find(fields, "anchor");
  bool inserts = action && (edit.action == Action::insert_before || edit.action == Action::insert_after);
  if (action && edit.action == Action::insert_before && !anchor)
    problems.add(mark_of(action->key_node),
                 "`insert-before` needs `anchor`: the statement of the function's body the code goes above");
  if (!anchor) return;
  if (!inserts) {
    problems.add(mark_of(anchor->key_node), "`anchor` goes only with `insert-before` or `insert-after`");
    return;
  }
  if (target && edit.kind != TargetKind::function)
    problems.add(mark_of(anchor->key_node),
                 "`anchor` is a statement of a function's body: it works on a `function`, not a `" + target->key + "`");
  if (auto a = text(*anchor, problems)) edit.anchor = std::string(util::trim(*a));
}

}  // namespace

std::optional<Edit> read_edit(const YAML::Node& item, int number, Mark mark, Problems& problems) {
  std::string nth = "edit " + std::to_string(number);
  if (!item.IsMap()) {
    problems.add(mark, nth + " must be a mapping (module, function, action), got " + describe(item));
    return std::nullopt;
  }
  Edit edit;
  edit.mark = mark;
  auto fields = entries(item, kEditKeys, problems,
                        {{"old", "it goes inside `replace`"},
                         {"new", "it goes inside `replace`"},
                         {"count", "it goes inside `replace`"}});

  // Where: exactly one of module / file.
  const Entry* module = find(fields, "module");
  const Entry* file = find(fields, "file");
  if (module && file) problems.add(mark, nth + " has both `module` and `file`; give one");
  if (!module && !file) problems.add(mark, nth + " needs `module` or `file`");
  if (module) {
    if (auto m = text(*module, problems)) {
      if (is_dotted_name(*m)) edit.module = *m;
      else problems.add(module->value_mark(), "`module` must be a dotted Python module name, got " + backquoted(*m));
    }
  }
  if (file) {
    if (auto f = text(*file, problems)) {
      if (std::string why = file_problem(*f); why.empty()) edit.file = *f;
      else problems.add(file->value_mark(), "`file` " + why + ", got " + backquoted(*f));
    }
  }

  // What: at most one of function / class / variable.
  const Entry* target = nullptr;
  for (const auto& e : fields) {
    auto t = std::find_if(kTargets.begin(), kTargets.end(), [&](auto& k) { return k.first == e.key; });
    if (t == kTargets.end()) continue;
    if (target) {
      problems.add(mark_of(e.key_node), nth + " has more than one target (`" + target->key + "`, `" +
                                            e.key + "`); give one");
      continue;
    }
    target = &e;
    edit.kind = t->second;
    if (auto name = text(e, problems)) {
      if (is_dotted_name(*name)) edit.target = *name;
      else problems.add(e.value_mark(), "`" + e.key + "` must be a Python name, dotted for nesting " +
                                            "(as in Class.method), got " + backquoted(*name));
    }
  }

  // How: at most one action.
  const Entry* action = nullptr;
  for (const auto& e : fields) {
    auto a = std::find_if(kActions.begin(), kActions.end(), [&](Action x) { return action_name(x) == e.key; });
    if (a == kActions.end()) continue;
    if (action) {
      problems.add(mark_of(e.key_node), nth + " has more than one action (`" + action->key + "`, `" +
                                            e.key + "`); give one per edit");
      continue;
    }
    action = &e;
    edit.action = *a;
    edit.code_mark = e.value_mark();
    switch (*a) {
      case Action::add_decorator:
      case Action::remove_decorator:
        if (auto d = decorator(e, problems)) edit.code = *d;
        break;
      case Action::replace:
        read_replace(e, edit, problems);
        break;
      default:
        if (auto code = text(e, problems)) edit.code = *code;
    }
  }

  if (const Entry* position = find(fields, "position")) {
    if (edit.action != Action::add_decorator) {
      problems.add(mark_of(position->key_node), "`position` goes only with `add-decorator`");
    } else if (auto p = text(*position, problems)) {
      if (*p == "innermost") edit.innermost = true;
      else if (*p != "outermost")
        problems.add(position->value_mark(), "`position` must be `outermost` or `innermost`, got " + backquoted(*p));
    }
  }

  for (const char* key : {"op-name", "op-schema"}) {
    const Entry* op = find(fields, key);
    if (!op) continue;
    if (edit.action != Action::register_custom_op) {
      problems.add(mark_of(op->key_node), "`" + std::string(key) + "` goes only with `register-custom-op`");
    } else if (auto v = text(*op, problems)) {
      std::string value = util::trim(*v);
      if (std::string(key) == "op-name") {
        if (valid_op_name(value)) edit.op_name = value;
        else
          problems.add(op->value_mark(), "`op-name` must be `namespace::name` (letters, digits, _), got " + backquoted(value));
      } else if (value.find("->") == std::string::npos || value.front() != '(' || value.find('\n') != std::string::npos) {
        problems.add(op->value_mark(), "`op-schema` must be a torch schema on one line, as `(Tensor x) -> Tensor`, got " +
                                           backquoted(value));
      } else {
        edit.op_schema = value;
      }
    }
  }

  read_anchor(fields, action, target, edit, problems);

  const Entry* ensure = find(fields, "ensure-import");
  if (ensure)
    if (auto s = import_statement(*ensure, problems)) edit.ensure_import = *s;

  const Entry* occurrence = find(fields, "occurrence");
  if (occurrence) {
    if (auto n = positive_int(*occurrence, problems)) edit.occurrence = *n;
    if (!target)
      problems.add(mark_of(occurrence->key_node), "`occurrence` needs a target: `function`, `class` or `variable`");
  }

  // The combinations that make sense.
  if (!action && !ensure) {
    if (target)
      problems.add(mark, nth + " names a " + target->key + " but no action; give one of " + kActionList);
    else
      problems.add(mark, nth + " has no action; give one of " + kActionList);
  }
  // replace with no target works on the module's own lines (those outside any definition).
  if (action && !target && edit.action != Action::replace_module && edit.action != Action::replace)
    problems.add(mark_of(action->key_node),
                 "`" + action->key + "` needs a target: `function`, `class` or `variable`");
  if (action && target && edit.action == Action::replace_module)
    problems.add(mark_of(target->key_node), "`replace-module` replaces the whole module: it takes no `" + target->key + "`");
  if (action && ensure && edit.action == Action::replace_module)
    problems.add(mark_of(ensure->key_node), "`replace-module` gives the whole text: put the import in it, not in `ensure-import`");
  if (action && target) {
    if (edit.action == Action::set_value && edit.kind != TargetKind::variable)
      problems.add(mark_of(action->key_node), "`set-value` works on a `variable`, not a `" + target->key + "`");
    if (needs_definition(edit.action) && edit.kind == TargetKind::variable)
      problems.add(mark_of(action->key_node),
                   "`" + action->key + "` works on a `function` or `class`, not a `variable`");
  }
  return edit;
}

}  // namespace sitepatch::recipe::detail
