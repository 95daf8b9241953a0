// The words users read for actions, target kinds, on-upgrade choices and edit locations.
#include "sitepatch/recipe/recipe.hpp"

namespace sitepatch::recipe {

std::string_view action_name(Action a) {
  switch (a) {
    case Action::none: return "ensure-import";
    case Action::replace_body: return "replace-body";
    case Action::prepend_body: return "prepend-body";
    case Action::add_decorator: return "add-decorator";
    case Action::remove_decorator: return "remove-decorator";
    case Action::replace_function: return "replace-function";
    case Action::replace: return "replace";
    case Action::set_value: return "set-value";
    case Action::insert_after: return "insert-after";
    case Action::insert_before: return "insert-before";
    case Action::replace_module: return "replace-module";
    case Action::register_custom_op: return "register-custom-op";
  }
  return "?";
}

std::string_view kind_name(TargetKind k) {
  switch (k) {
    case TargetKind::function: return "function";
    case TargetKind::class_: return "class";
    case TargetKind::variable: return "variable";
  }
  return "?";
}

std::string_view on_upgrade_name(OnUpgrade o) {
  switch (o) {
    case OnUpgrade::reapply: return "reapply";
    case OnUpgrade::warn: return "warn";
    case OnUpgrade::fail: return "fail";
  }
  return "?";
}

void set_replace_indent(Recipe& r, ReplaceIndent indent) {
  r.replace_indent = indent;
  for (Edit& e : r.edits) e.indent = indent;
}

std::string Edit::where() const {
  std::string out = module.empty() ? file : module;
  if (!target.empty()) out += ":" + target;
  return out;
}

Mark Edit::code_position(int line, int column) const {
  if (code_mark.line == 0) return mark;
  if (code_lines) return {code_mark.line + line - 1, code_mark.column + column - 1};
  if (line == 1) return {code_mark.line, code_mark.column + column - 1};
  return code_mark;
}

}  // namespace sitepatch::recipe
