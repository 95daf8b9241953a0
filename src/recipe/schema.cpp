// Schema helpers: positions, type checks and key checks shared by the recipe and its edits.
#include "schema.hpp"

#include <algorithm>
#include <cctype>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::recipe::detail {

void Problems::add(Mark mark, std::string message) {
  list_.push_back(Diagnostic{path_, mark, std::move(message)});
}

void Problems::raise() {
  std::stable_sort(list_.begin(), list_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.mark.line, a.mark.column) < std::tie(b.mark.line, b.mark.column);
  });
  throw RecipeError(std::move(list_));
}

Mark to_mark(const YAML::Mark& m) {
  if (m.is_null() || m.line < 0 || m.column < 0) return Mark{1, 1};
  return Mark{m.line + 1, m.column + 1};
}

Mark mark_of(const YAML::Node& n) { return to_mark(n.Mark()); }

std::string backquoted(std::string_view s) {
  std::string line(s.substr(0, s.find('\n')));
  bool cut = line.size() < s.size();
  if (line.size() > 60) {
    line.resize(57);
    cut = true;
  }
  return "`" + util::printable(line) + (cut ? "...`" : "`");
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return backquoted(n.Scalar());
    default: return "nothing";
  }
}

Mark Entry::value_mark() const {
  return value.IsNull() ? mark_of(key_node) : mark_of(value);
}

std::vector<Entry> entries(const YAML::Node& map, const std::vector<std::string>& allowed,
                           Problems& problems, const std::map<std::string, std::string>& elsewhere) {
  std::vector<Entry> out;
  // Copies, not references: yaml-cpp's iterator hands out its pair through a temporary.
  for (const auto& pair : map) {
    YAML::Node key = pair.first;
    Mark at = mark_of(key);
    if (!key.IsScalar()) {
      problems.add(at, "a key must be a plain word, got " + describe(key));
      continue;
    }
    std::string name = key.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string message = "unknown key `" + name + "`";
      if (auto note = elsewhere.find(name); note != elsewhere.end()) {
        message += "; " + note->second;
      } else if (auto near = util::nearest(name, allowed, 1); !near.empty()) {
        message += "; did you mean `" + near[0] + "`?";
      }
      problems.add(at, message);
      continue;
    }
    if (const Entry* first = find(out, name)) {
      problems.add(at, "duplicate key `" + name + "`; first given at line " +
                           std::to_string(mark_of(first->key_node).line));
      continue;
    }
    out.push_back(Entry{name, key, pair.second});
  }
  return out;
}

const Entry* find(const std::vector<Entry>& entries, std::string_view key) {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::optional<std::string> text(const Entry& e, Problems& problems) {
  if (e.value.IsNull()) {
    problems.add(e.value_mark(), "`" + e.key + "` needs a value");
    return std::nullopt;
  }
  if (!e.value.IsScalar()) {
    problems.add(e.value_mark(), "`" + e.key + "` must be a string, got " + describe(e.value));
    return std::nullopt;
  }
  if (util::trim(e.value.Scalar()).empty()) {
    problems.add(e.value_mark(), "`" + e.key + "` needs a value");
    return std::nullopt;
  }
  return e.value.Scalar();
}

std::optional<int> positive_int(const Entry& e, Problems& problems) {
  if (e.value.IsScalar()) {
    const std::string& s = e.value.Scalar();
    bool digits = !s.empty() && s.size() <= 9 &&
                  std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && std::stoi(s) >= 1) return std::stoi(s);
  }
  problems.add(e.value_mark(), "`" + e.key + "` must be an integer >= 1, got " + describe(e.value));
  return std::nullopt;
}

bool is_dotted_name(std::string_view s) {
  if (s.empty()) return false;
  for (const auto& part : util::split(s, '.')) {
    if (part.empty()) return false;
    // Bytes >= 0x80 let non-ASCII identifiers through; Python decides the rest.
    auto ident = [](char c) { return c == '_' || std::isalnum(static_cast<unsigned char>(c)) || (c & 0x80); };
    if (std::isdigit(static_cast<unsigned char>(part[0]))) return false;
    if (!std::all_of(part.begin(), part.end(), ident)) return false;
  }
  return true;
}

Mark dash_mark(const YAML::Node& item, std::string_view text) {
  Mark m = mark_of(item);
  if (item.Mark().is_null()) return m;
  // The start of the mapping's line: its offset less its column (yaml-cpp counts both
  // in bytes), checked, else found by counting lines (linear: once per edit would make
  // a long recipe quadratic, so only as a fallback).
  const YAML::Mark& at_mark = item.Mark();
  size_t line_start = 0;
  size_t guess = size_t(at_mark.pos - at_mark.column);
  if (at_mark.pos >= at_mark.column && size_t(at_mark.pos) <= text.size() &&
      (guess == 0 ? at_mark.line == 0 : text[guess - 1] == '\n')) {
    line_start = guess;
  } else {
    for (int line = 0; line < at_mark.line; ++line) {
      line_start = text.find('\n', line_start);
      if (line_start == std::string_view::npos) return m;
      ++line_start;
    }
  }
  for (int col = item.Mark().column - 1; col >= 0; --col) {
    size_t at = line_start + static_cast<size_t>(col);
    if (at >= text.size()) return m;
    if (text[at] == ' ') continue;
    if (text[at] == '-') return Mark{m.line, col + 1};
    break;
  }
  return m;
}

}  // namespace sitepatch::recipe::detail
