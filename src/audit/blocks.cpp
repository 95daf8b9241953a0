// Cutting a module into top-level statements by reading its text: brackets, strings
// and continued lines are tracked, nothing else (the parser does the rest per block).
#include "audit/blocks.hpp"

#include <cstring>

namespace sitepatch::audit::detail {

namespace {

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (unsigned char)c >= 0x80;
}

// `else:`, `elif x:`, `except E:`, `finally:` continue the statement above them.
bool continues_compound(std::string_view t, size_t at) {
  for (std::string_view k : {"else", "elif", "except", "finally"})
    if (t.compare(at, k.size(), k) == 0 && (at + k.size() == t.size() || !ident_char(t[at + k.size()])))
      return true;
  return false;
}

// Reads one line from `i` (the line's first byte) to its '\n' (or the end), updating
// what is open at the line's end. Returns where the line's '\n' is.
struct LineScanner {
  std::string_view t;
  int depth = 0;          // open brackets
  char quote = 0;         // the open string's quote, or 0
  bool triple = false;
  bool continued = false; // the line ended with `\` outside a string
  uint32_t extra_rows = 0;  // newlines escaped inside a string on this line

  size_t line(size_t i) {
    continued = false;
    extra_rows = 0;
    const size_t n = t.size();
    while (i < n && t[i] != '\n') {
      char c = t[i];
      if (quote) {
        if (c == '\\' && i + 1 < n) {
          // An escaped newline (also \r\n) stays inside the string.
          size_t skip = t[i + 1] == '\r' && i + 2 < n && t[i + 2] == '\n' ? 3 : 2;
          if (t[i + skip - 1] == '\n') ++extra_rows;
          i += skip;
          continue;
        }
        if (c == quote && (!triple || (i + 2 < n && t[i + 1] == c && t[i + 2] == c))) {
          i += triple ? 3 : 1;
          quote = 0;
          continue;
        }
        ++i;
        continue;
      }
      if (c == '#') {
        const void* nl = ::memchr(t.data() + i, '\n', n - i);
        return nl ? size_t(static_cast<const char*>(nl) - t.data()) : n;
      }
      if (c == '"' || c == '\'') {
        triple = i + 2 < n && t[i + 1] == c && t[i + 2] == c;
        quote = c;
        i += triple ? 3 : 1;
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      else if (c == '\\' && i + 1 < n && (t[i + 1] == '\n' || t[i + 1] == '\r')) continued = true;
      ++i;
    }
    if (quote && !triple) quote = 0;  // a one-line string ends with its line (else it is an error)
    return i;
  }
};

}  // namespace

std::vector<Block> top_level_blocks(std::string_view t) {
  std::vector<Block> out;
  LineScanner scan{t};
  bool after_decorator = false;
  uint32_t row = 0;
  size_t line_start = 0;
  auto close = [&](size_t at, uint32_t end_row, uint32_t end_column) {
    if (out.empty()) return;
    out.back().end = uint32_t(at);
    out.back().end_row = end_row;
    out.back().end_column = end_column;
  };
  out.push_back(Block{0, 0, 0});  // whatever precedes the first statement belongs to it
  bool first = true;
  for (size_t i = 0; i < t.size();) {
    if (!scan.quote && scan.depth == 0 && !scan.continued && !std::strchr(" \t\f\r\n#", t[i]) &&
        !continues_compound(t, i)) {
      if (!first && !after_decorator) {
        close(i, row, 0);
        out.push_back(Block{uint32_t(i), 0, row});
      }
      first = false;
      after_decorator = t[i] == '@';
    }
    size_t nl = scan.line(i);
    row += scan.extra_rows;
    line_start = i;
    if (nl >= t.size()) {
      i = t.size();
      break;
    }
    i = nl + 1;
    ++row;
    line_start = i;
  }
  close(t.size(), row, uint32_t(t.size() - line_start));
  return out;
}

}  // namespace sitepatch::audit::detail
