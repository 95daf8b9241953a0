// Recipe YAML written by sitepatch (capture): each value in the form YAML reads back as
// the same bytes, a `|` block where that holds, else double-quoted (JSON's escapes,
// which YAML reads the same).
#include <nlohmann/json.hpp>

#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::recipe {
namespace {

bool control_free(std::string_view s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
  return true;
}

// Whether a `|` block at any indentation gives `s` back: one final newline, a first line
// that sets the indentation (no leading blank), no carriage return.
bool block_safe(std::string_view s) {
  if (s.size() < 2 || s.back() != '\n' || s[s.size() - 2] == '\n') return false;
  if (s.find('\r') != std::string_view::npos || !control_free(s)) return false;
  size_t first = s.find_first_not_of('\n');
  return first != std::string_view::npos && s[first] != ' ' && s[first] != '\t' && first == 0;
}

// Bytes that are not UTF-8 become U+FFFD here: the value then reads back different, and
// check_written refuses the recipe rather than write it.
std::string json_quoted(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// " |-" and the lines at `indent` for text of several lines that a block gives back,
// else " " and one scalar; then the line end. Lines without a last newline (an anchor,
// a trimmed replace text) read back from `|-` as they are.
std::string block_or_scalar(const std::string& text, const std::string& indent) {
  bool strip = !text.empty() && text.back() != '\n' && text.find('\n') != std::string::npos;
  std::string as_block = strip ? text + "\n" : text;
  if (!block_safe(as_block)) return " " + (text.empty() ? std::string("\"\"") : yaml_scalar(text)) + "\n";
  std::string out = strip ? " |-\n" : " |\n";
  for (auto& line : util::split(std::string_view(as_block).substr(0, as_block.size() - 1), '\n'))
    out += line.empty() ? "\n" : indent + line + "\n";
  return out;
}

}  // namespace

std::string yaml_scalar(std::string_view s) {
  static const std::string kIndicators = "-?:,[]{}#&*!|>'\"%@`";
  bool plain = !s.empty() && control_free(s) && s.find('\n') == std::string_view::npos &&
               s.front() != ' ' && s.back() != ' ' && s.front() != '\t' && s.back() != '\t' &&
               kIndicators.find(s.front()) == std::string::npos && s.find(": ") == std::string_view::npos &&
               s.find(" #") == std::string_view::npos && s.back() != ':';
  // Words YAML reads as something else, and numbers, stay strings only quoted.
  static const std::vector<std::string> kSpecial = {"true", "false", "yes", "no", "on", "off", "null", "~",
                                                    "True", "False", "Yes", "No", "On", "Off", "Null", "NULL",
                                                    "TRUE", "FALSE"};
  if (plain && std::find(kSpecial.begin(), kSpecial.end(), std::string(s)) != kSpecial.end()) plain = false;
  return plain ? std::string(s) : json_quoted(s);
}

std::string edit_yaml(const Edit& e) {
  std::string out = "  - " + std::string(e.file.empty() ? "module: " + yaml_scalar(e.module) : "file: " + yaml_scalar(e.file)) + "\n";
  if (!e.target.empty()) out += "    " + std::string(kind_name(e.kind)) + ": " + yaml_scalar(e.target) + "\n";
  if (e.occurrence > 0) out += "    occurrence: " + std::to_string(e.occurrence) + "\n";
  if (e.action == Action::replace) {
    // old and new inside `replace`, each a block or a quoted string.
    out += "    replace:\n";
    for (auto [key, text] : {std::pair<const char*, const std::string*>{"old", &e.old_text}, {"new", &e.new_text}}) {
      out += std::string("      ") + key + ":" + block_or_scalar(*text, "        ");
    }
    if (e.count != 1) out += "      count: " + std::to_string(e.count) + "\n";
  } else if (e.action != Action::none) {
    out += "    " + std::string(action_name(e.action)) + ":";
    bool decorator = e.action == Action::add_decorator || e.action == Action::remove_decorator;
    if (!decorator && block_safe(e.code)) {
      out += " |\n";
      for (auto& line : util::split(std::string_view(e.code).substr(0, e.code.size() - 1), '\n'))
        out += line.empty() ? "\n" : "      " + line + "\n";
    } else {
      out += " " + yaml_scalar(e.code) + "\n";
    }
    if (!e.anchor.empty()) out += "    anchor:" + block_or_scalar(e.anchor, "      ");
    if (e.innermost) out += "    position: innermost\n";
    if (!e.op_name.empty()) out += "    op-name: " + yaml_scalar(e.op_name) + "\n";
    if (!e.op_schema.empty()) out += "    op-schema: " + yaml_scalar(e.op_schema) + "\n";
  }
  if (!e.ensure_import.empty()) out += "    ensure-import: " + yaml_scalar(e.ensure_import) + "\n";
  return out;
}

std::string yaml_comment(std::string_view s) {
  // printable() escapes C0, DEL, C1 and bad UTF-8; YAML 1.1 also breaks lines at U+2028
  // and U+2029 (E2 80 A8/A9), which a log or a file name may hold.
  std::string out = util::printable(s);
  for (auto [raw, esc] : {std::pair<const char*, const char*>{"\xe2\x80\xa8", "\\u2028"}, {"\xe2\x80\xa9", "\\u2029"}})
    for (size_t at = out.find(raw); at != std::string::npos; at = out.find(raw, at))
      out.replace(at, 3, esc);
  return out;
}

void check_written(std::string_view text, const std::string& id, const std::vector<Edit>& edits,
                   const std::string& what) {
  std::string nothing = "; nothing was written (a sitepatch bug, or a name in the input it cannot quote: please report it)";
  Recipe r;
  try {
    r = parse(text, what);
  } catch (const Error& e) {
    throw Error(what + " does not read back as a recipe: " + e.what() + nothing);
  }
  if (r.id != id) throw Error(what + " reads back with the id " + util::printable(r.id) + ", not " + id + nothing);
  if (r.edits.size() != edits.size())
    throw Error(what + " reads back as " + std::to_string(r.edits.size()) + " edits, not the " +
                std::to_string(edits.size()) + " proposed" + nothing);
  // Each edit as written again: the same text is the same edit.
  for (size_t i = 0; i < edits.size(); ++i)
    if (edit_yaml(r.edits[i]) != edit_yaml(edits[i]))
      throw Error(what + ": edit " + std::to_string(i + 1) + " reads back as " + util::printable(r.edits[i].where()) +
                  ", not as proposed (" + util::printable(edits[i].where()) + ")" + nothing);
}

}  // namespace sitepatch::recipe
