// Recipe format v1: the document and its top-level keys (id, description, requires, edits).
#include <yaml-cpp/depthguard.h>

#include <vector>

#include "load.hpp"
#include "schema.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch/util/utf8.hpp"

namespace sitepatch::recipe {


using namespace detail;

namespace {

// `requires: torch>=2.1` or a list of them, each a requirement that must hold.
void read_requires(const Entry& req, Recipe& r, Problems& problems) {
  auto one = [&](const std::string& s, Mark at) {
    std::string error;
    if (auto parsed = parse_requirement(s, &error)) r.requires.push_back(std::move(*parsed));
    else problems.add(at, "`requires`: " + error);
  };
  if (!req.value.IsSequence()) {
    if (auto s = text(req, problems)) one(*s, req.value_mark());
    return;
  }
  if (req.value.size() == 0) problems.add(req.value_mark(), "`requires`: an empty list; give a distribution, or leave the key out");
  for (const auto& item : req.value) {
    if (!item.IsScalar() || item.Scalar().empty())
      problems.add(mark_of(item), "`requires`: each item must be one requirement, such as torch>=2.1");
    else
      one(item.Scalar(), mark_of(item));
  }
}


// A hint for yaml-cpp's "unknown token" on a value that starts with `@` or a backquote,
// both reserved by YAML (`add-decorator: @torch.compiler.disable`), and for "illegal map
// value": a `: ` inside a plain value (`replace-body: return {a: b}`, a dict or a
// slice written on one line) reads as a second key.
std::string syntax_hint(std::string_view text, const YAML::Mark& m, const std::string& msg) {
  if (m.is_null()) return "";
  if (msg == "illegal map value")
    return "; a value holding `: ` must be quoted, or written as a block (`|` and the code on the lines below)";
  size_t at = 0;
  for (int line = 0; line < m.line && at != std::string_view::npos; ++line) {
    at = text.find('\n', at);
    if (at != std::string_view::npos) ++at;
  }
  if (at == std::string_view::npos || at + m.column >= text.size()) return "";
  char c = text[at + m.column];
  if (c != '@' && c != '`') return "";
  return std::string("; YAML reserves `") + c + "` at the start of a value: quote the value";
}

// Where each line of `text` starts, so a mark maps to its byte in constant time (a
// recipe of many edits must not rescan its text once per edit).
std::vector<size_t> line_starts(std::string_view text) {
  std::vector<size_t> out{0};
  for (size_t p = text.find('\n'); p != std::string_view::npos; p = text.find('\n', p + 1)) out.push_back(p + 1);
  return out;
}

// Byte offset of a 1-based mark in `text`, or npos.
size_t offset_of(std::string_view text, const std::vector<size_t>& starts, Mark m) {
  if (m.line < 1 || size_t(m.line) > starts.size()) return std::string_view::npos;
  size_t at = starts[size_t(m.line - 1)] + size_t(m.column - 1);
  return at < text.size() ? at : std::string_view::npos;
}

// Moves the edit's code mark from the YAML value to the code's first character, so that
// a position inside the code maps onto the recipe: past a quote, or for a `|` block to
// its first content line (its lines are the code's lines).
void place_code(std::string_view text, const std::vector<size_t>& starts, Edit& e) {
  if (e.code_mark.line <= 0 || e.code_mark.column <= 0) return;
  size_t at = offset_of(text, starts, e.code_mark);
  if (at == std::string_view::npos) return;
  char c = text[at];
  if (c == '"' || c == '\'') {
    ++e.code_mark.column;
    return;
  }
  if (c != '|' && c != '>') return;
  int line = e.code_mark.line;
  for (size_t p = text.find('\n', at); p != std::string_view::npos; p = text.find('\n', p + 1)) {
    ++line;
    size_t b = p + 1, ws = b;
    while (ws < text.size() && text[ws] == ' ') ++ws;
    if (ws < text.size() && text[ws] != '\n' && text[ws] != '\r') {
      e.code_mark = {line, int(ws - b) + 1};
      e.code_lines = c == '|';  // `>` folds lines together
      return;
    }
  }
}

// The 1-based line and column (in characters) of byte `at`.
Mark utf8_mark(std::string_view text, size_t at) {
  Mark m{1, 1};
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++m.line;
      m.column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++m.column;
    }
  }
  return m;
}

// Reads the whole document; every problem goes to `problems`.
void read_recipe(const YAML::Node& root, std::string_view source, Recipe& r, Problems& problems) {
  auto fields = entries(root, {"id", "description", "requires", "on-upgrade", "replace-indent", "edits"}, problems);

  if (const Entry* id = find(fields, "id")) {
    if (auto s = text(*id, problems)) {
      if (valid_id(*s)) r.id = *s;
      else problems.add(id->value_mark(), "`id` must match [a-z0-9][a-z0-9._-]*, got " + backquoted(*s));
    }
  } else {
    problems.add(mark_of(root), "missing required key `id`");
  }

  if (const Entry* d = find(fields, "description"))
    if (auto s = text(*d, problems)) r.description = *s;

  if (const Entry* req = find(fields, "requires")) read_requires(*req, r, problems);

  if (const Entry* up = find(fields, "on-upgrade")) {
    if (auto s = text(*up, problems)) {
      if (*s == "reapply") r.on_upgrade = OnUpgrade::reapply;
      else if (*s == "warn") r.on_upgrade = OnUpgrade::warn;
      else if (*s == "fail") r.on_upgrade = OnUpgrade::fail;
      else problems.add(up->value_mark(), "`on-upgrade` must be reapply, warn or fail, got " + backquoted(*s));
    }
  }

  if (const Entry* ind = find(fields, "replace-indent")) {
    if (auto s = text(*ind, problems)) {
      if (*s == "relative" || *s == "absolute") r.replace_indent_given = true;
      if (*s == "absolute") r.replace_indent = ReplaceIndent::absolute;
      else if (*s != "relative")
        problems.add(ind->value_mark(), "`replace-indent` must be relative or absolute, got " + backquoted(*s));
    }
  }

  const Entry* edits = find(fields, "edits");
  if (!edits) {
    problems.add(mark_of(root), "missing required key `edits`");
    return;
  }
  if (!edits->value.IsSequence()) {
    problems.add(edits->value_mark(), "`edits` must be a list of edits, got " + describe(edits->value));
    return;
  }
  if (edits->value.size() == 0) {
    problems.add(edits->value_mark(), "`edits` must list at least one edit");
    return;
  }
  int number = 0;
  const auto starts = line_starts(source);
  for (const auto& item : edits->value) {
    ++number;
    if (auto e = read_edit(item, number, dash_mark(item, source), problems)) {
      place_code(source, starts, *e);
      r.edits.push_back(std::move(*e));
    }
  }
}

}  // namespace

// [a-z0-9][a-z0-9._-]*, without std::regex (whose recursion overflows the stack on a
// long enough value).
bool valid_id(std::string_view s) {
  auto lower_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || !lower_digit(s[0])) return false;
  for (char c : s)
    if (!lower_digit(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

Recipe parse(std::string_view text, const std::string& path) {
  Recipe r;
  r.path = path;
  r.text = std::string(text);
  r.hash = util::sha256_hex(text);
  Problems problems(path);

  if (auto bad = util::first_invalid_utf8(text)) {
    problems.add(utf8_mark(text, *bad), "not UTF-8: byte " + util::hex_byte(text[*bad]) +
                                            " (a recipe must be UTF-8 text)");
    problems.raise();
  }
  Loaded doc;
  try {
    doc = load_first_document(r.text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for it is "bad file".
    problems.add(to_mark(e.mark), "YAML syntax error: nested more than " + std::to_string(e.depth() - 1) +
                                      " levels deep");
    problems.raise();
  } catch (const YAML::Exception& e) {
    problems.add(to_mark(e.mark), "YAML syntax error: " + e.msg + syntax_hint(text, e.mark, e.msg));
    problems.raise();
  }
  if (doc.root.IsNull() && !doc.second) {
    problems.add(Mark{1, 1}, "recipe is empty");
    problems.raise();
  }
  if (doc.second)
    problems.add(to_mark(*doc.second), "a recipe file holds one recipe; this is a second YAML document");
  const YAML::Node& root = doc.root;
  if (!root.IsMap()) {
    problems.add(mark_of(root), "a recipe must be a mapping with `id` and `edits`, got " + describe(root));
    problems.raise();
  }
  read_recipe(root, text, r, problems);
  if (!problems.empty()) problems.raise();
  set_replace_indent(r, r.replace_indent);
  return r;
}

}  // namespace sitepatch::recipe
