#include "python/text.hpp"

#include <algorithm>

namespace sitepatch::python::text {
namespace {

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (true) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string_view::npos) {
      out.push_back(s.substr(pos));
      break;
    }
    out.push_back(s.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

std::string_view rstrip(std::string_view s) {
  size_t e = s.find_last_not_of(" \t\r\f\v");
  return e == std::string_view::npos ? std::string_view() : s.substr(0, e + 1);
}

size_t ws_len(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

}  // namespace

std::string detect_eol(std::string_view src) {
  size_t nl = src.find('\n');
  return nl != std::string_view::npos && nl > 0 && src[nl - 1] == '\r' ? "\r\n" : "\n";
}

std::string to_lf(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;
    out += s[i];
  }
  return out;
}

std::string with_eol(std::string_view s, std::string_view eol) {
  if (eol == "\n") return std::string(s);
  std::string out;
  out.reserve(s.size() + s.size() / 16);
  for (char c : s) {
    if (c == '\n')
      out += eol;
    else
      out += c;
  }
  return out;
}

size_t line_begin(std::string_view src, size_t off) {
  off = std::min(off, src.size());
  while (off > 0 && src[off - 1] != '\n') --off;
  return off;
}

size_t line_after(std::string_view src, size_t off) {
  size_t nl = src.find('\n', off);
  return nl == std::string_view::npos ? src.size() : nl + 1;
}

std::string_view leading_ws(std::string_view src, size_t begin) {
  return src.substr(begin, ws_len(src.substr(begin)));
}

namespace {

// Where each line of `lf` stands against the string literals in it.
struct LineFacts {
  bool starts_inside = false;  // its first byte is part of a literal that began earlier
  bool ends_inside = false;    // its line ending is part of a literal
};

// Whether byte `x` is inside a literal and not its first byte. `literal` is sorted and
// its ranges do not overlap, so the last range starting before `x` decides.
bool within(const std::vector<Range>& literal, size_t x) {
  auto it = std::lower_bound(literal.begin(), literal.end(), x,
                             [](const Range& r, size_t v) { return r.begin < v; });
  if (it == literal.begin()) return false;
  --it;
  return x < it->end;
}

LineFacts facts_of(std::string_view lf, std::string_view line, const std::vector<Range>& literal) {
  size_t b = size_t(line.data() - lf.data()), nl = b + line.size();
  return {within(literal, b), nl < lf.size() && within(literal, nl)};
}

}  // namespace

std::string reindent(std::string_view code, std::string_view prefix, const Style& style,
                     const std::vector<Range>& literal) {
  std::string lf = to_lf(code);
  std::vector<std::string_view> lines = split_lines(lf);
  while (!lines.empty() && blank(lines.back()) && !facts_of(lf, lines.back(), literal).starts_inside)
    lines.pop_back();
  size_t first = 0;
  while (first < lines.size() && blank(lines[first])) ++first;
  lines.erase(lines.begin(), lines.begin() + long(first));
  if (lines.empty()) return "";
  std::vector<LineFacts> facts;
  facts.reserve(lines.size());
  for (auto l : lines) facts.push_back(facts_of(lf, l, literal));

  // The code's common indentation goes; its smallest remaining indentation is its unit.
  // Lines inside a literal are its content, not code: they count for neither.
  std::string_view common;
  bool have_common = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto l = lines[i];
    if (blank(l) || facts[i].starts_inside) continue;
    std::string_view ws = l.substr(0, ws_len(l));
    if (!have_common) {
      common = ws;
      have_common = true;
    } else {
      size_t k = 0;
      while (k < common.size() && k < ws.size() && common[k] == ws[k]) ++k;
      common = common.substr(0, k);
    }
  }
  size_t unit = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto l = lines[i];
    if (blank(l) || facts[i].starts_inside) continue;
    std::string_view ws = l.substr(common.size(), ws_len(l) - common.size());
    if (!ws.empty() && ws.find('\t') == std::string_view::npos && (unit == 0 || ws.size() < unit))
      unit = ws.size();
  }

  std::string out;
  out.reserve(lf.size() + lines.size() * (prefix.size() + 4));
  for (size_t i = 0; i < lines.size(); ++i) {
    auto l = lines[i];
    if (facts[i].starts_inside) {
      out += l;
      out += style.eol;
      continue;
    }
    if (blank(l)) {
      out += style.eol;
      continue;
    }
    std::string_view ws = l.substr(common.size(), ws_len(l) - common.size());
    std::string_view rest = l.substr(common.size() + ws.size());
    if (!facts[i].ends_inside) rest = rstrip(rest);
    out += prefix;
    if (ws.find_first_not_of('\t') == std::string_view::npos) {
      for (size_t k = 0; k < ws.size(); ++k) out += style.unit;  // one tab = one level
    } else if (ws.find('\t') == std::string_view::npos && unit > 0) {
      for (size_t k = 0; k < ws.size() / unit; ++k) out += style.unit;
      out.append(ws.size() % unit, ' ');
    } else {
      out += ws;  // mixed tabs and spaces: keep as written
    }
    out += rest;
    out += style.eol;
  }
  return out;
}

std::string normalize_block(std::string_view s, std::string_view indent) {
  std::string lf = to_lf(s);
  std::vector<std::string_view> lines = split_lines(lf);
  while (!lines.empty() && blank(lines.back())) lines.pop_back();
  size_t first = 0;
  while (first < lines.size() && blank(lines[first])) ++first;
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) {
    std::string_view l = rstrip(lines[i]);
    if (!indent.empty() && l.substr(0, indent.size()) == indent) l.remove_prefix(indent.size());
    if (i > first) out += '\n';
    out += l;
  }
  return out;
}

std::string_view strip(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string times(size_t n) { return std::to_string(n) + (n == 1 ? " time" : " times"); }

}  // namespace sitepatch::python::text
