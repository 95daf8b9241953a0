#include "python/encoding.hpp"

#include <iconv.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <map>

#include "sitepatch/util/utf8.hpp"

namespace sitepatch::python::encoding {

namespace {

// Python's spelling of an encoding name -> iconv's, for the names Python normalizes
// itself (tokenizer.c get_normal_name) and the common aliases; any other name is
// handed to iconv as it is, upper-cased.
std::string iconv_name(const std::string& normal) {
  static const std::map<std::string, std::string> kAlias = {
      {"latin-1", "ISO-8859-1"}, {"latin1", "ISO-8859-1"},     {"l1", "ISO-8859-1"},
      {"iso-latin-1", "ISO-8859-1"}, {"iso-8859-1", "ISO-8859-1"}, {"iso8859-1", "ISO-8859-1"},
      {"8859", "ISO-8859-1"},    {"cp819", "ISO-8859-1"},      {"ascii", "ASCII"},
      {"us-ascii", "ASCII"},     {"646", "ASCII"},             {"cp1252", "CP1252"},
      {"windows-1252", "CP1252"}, {"shift-jis", "SHIFT_JIS"},  {"euc-jp", "EUC-JP"}};
  auto it = kAlias.find(normal);
  if (it != kAlias.end()) return it->second;
  std::string up = normal;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return up;
}

// Lowercase, `_` -> `-`, and the suffixes Python drops ("utf-8-unix", "latin-1-dos").
std::string normal_name(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
    return c == '_' ? '-' : char(std::tolower(c));
  });
  if (name == "utf8" || name == "u8" || name == "utf" || name.rfind("utf-8", 0) == 0) return "utf-8";
  for (const char* latin : {"latin-1", "iso-8859-1", "iso-latin-1"})
    if (name.rfind(std::string(latin) + "-", 0) == 0) return "iso-8859-1";
  if (name == "latin-1" || name == "iso-latin-1" || name == "latin1") return "iso-8859-1";
  return name;
}

// The first two lines of `bytes` (any line end), without their ends.
std::pair<std::string_view, std::string_view> first_lines(std::string_view bytes) {
  auto line_at = [&](size_t from, size_t& next) {
    size_t end = bytes.find_first_of("\r\n", from);
    if (end == std::string_view::npos) {
      next = bytes.size();
      return bytes.substr(from);
    }
    next = end + (bytes.compare(end, 2, "\r\n") == 0 ? 2 : 1);
    return bytes.substr(from, end - from);
  };
  size_t next = 0;
  std::string_view one = line_at(0, next);
  std::string_view two = next < bytes.size() ? line_at(next, next) : std::string_view();
  return {one, two};
}

// The name in a coding line (PEP 263: `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`), or "".
// By hand: std::regex recurses per character and a long first line overflows the stack.
std::string cookie(std::string_view line) {
  size_t i = line.find_first_not_of(" \t\f");
  if (i == std::string_view::npos || line[i] != '#') return "";
  for (size_t at = line.find("coding", i); at != std::string_view::npos; at = line.find("coding", at + 1)) {
    size_t k = at + 6;
    if (k >= line.size() || (line[k] != ':' && line[k] != '=')) continue;
    ++k;
    while (k < line.size() && (line[k] == ' ' || line[k] == '\t')) ++k;
    size_t from = k;
    while (k < line.size() && (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '-' ||
                               line[k] == '_' || line[k] == '.'))
      ++k;
    if (k > from) return std::string(line.substr(from, k - from));
  }
  return "";
}

bool blank_or_comment(std::string_view line) {
  size_t i = line.find_first_not_of(" \t\f");
  return i == std::string_view::npos || line[i] == '#';
}

// 1-based line of byte `at` (LF, CRLF or CR ends).
size_t line_of(std::string_view bytes, size_t at) {
  size_t line = 1;
  for (size_t i = 0; i < at && i < bytes.size(); ++i)
    if (bytes[i] == '\n' || (bytes[i] == '\r' && (i + 1 >= bytes.size() || bytes[i + 1] != '\n'))) ++line;
  return line;
}

std::string byte_error(std::string_view bytes, size_t at, const std::string& name) {
  return "line " + std::to_string(line_of(bytes, at)) + ", byte " + util::hex_byte(bytes[at]) + " (offset " +
         std::to_string(at) + ") is not valid " + name;
}

// Converts all of `in` with iconv; on a character it cannot convert, returns the
// offset of that character in `in` through `bad`.
bool convert(std::string_view in, const std::string& to, const std::string& from, std::string& out, size_t& bad) {
  iconv_t cd = iconv_open(to.c_str(), from.c_str());
  if (cd == iconv_t(-1)) {
    bad = std::string::npos;
    return false;
  }
  out.clear();
  out.resize(in.size() * 4 + 16);
  char* src = const_cast<char*>(in.data());
  size_t src_left = in.size();
  char* dst = out.data();
  size_t dst_left = out.size();
  bool ok = true;
  while (src_left > 0) {
    size_t r = iconv(cd, &src, &src_left, &dst, &dst_left);
    if (r != size_t(-1)) continue;
    if (errno == E2BIG) {
      size_t used = size_t(dst - out.data());
      out.resize(out.size() * 2);
      dst = out.data() + used;
      dst_left = out.size() - used;
      continue;
    }
    ok = false;
    bad = size_t(src - in.data());
    break;
  }
  if (ok) out.resize(size_t(dst - out.data()));
  iconv_close(cd);
  return ok;
}

std::string describe_char(std::string_view text, size_t at) {
  size_t len = 1;
  unsigned char c = static_cast<unsigned char>(text[at]);
  if (c >= 0xF0) len = 4;
  else if (c >= 0xE0) len = 3;
  else if (c >= 0xC0) len = 2;
  std::string ch(text.substr(at, len));
  uint32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
  for (size_t k = 1; k < len && at + k < text.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[at + k]) & 0x3F);
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", cp);
  return "`" + ch + "` (" + buf + ")";
}

}  // namespace

tl::expected<Codec, std::string> detect(std::string_view bytes) {
  Codec c;
  bool bom = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0;
  auto [one, two] = first_lines(bom ? bytes.substr(3) : bytes);
  std::string name = cookie(one);
  if (name.empty() && blank_or_comment(one)) name = cookie(two);
  if (!name.empty()) {
    std::string normal = normal_name(name);
    if (bom && normal != "utf-8")
      return tl::make_unexpected("it starts with a UTF-8 byte order mark but its coding line says " + name);
    if (normal != "utf-8") {
      c.name = normal;
      c.iconv = iconv_name(normal);
      iconv_t cd = iconv_open("UTF-8", c.iconv.c_str());
      if (cd == iconv_t(-1)) return tl::make_unexpected("its coding line names an unknown encoding, " + name);
      iconv_close(cd);
      // Python reads source only in encodings that keep ASCII as it is (not UTF-16).
      const std::string ascii = "# coding=x\n";
      std::string out;
      size_t bad = 0;
      if (!convert(ascii, c.iconv, "UTF-8", out, bad) || out != ascii)
        return tl::make_unexpected("its coding line names " + name + ", which Python cannot read source in");
      // Python's codec and iconv's may part on ASCII bytes (iconv's shift_jis reads 0x5C
      // as U+00A5 where Python reads a backslash): the tree would then differ from
      // Python's wherever a backslash escapes a quote, and a recipe could patch a decoy.
      for (int b = 0; b < 0x80; ++b) {
        std::string one(1, char(b)), read;
        if (!convert(one, "UTF-8", c.iconv, read, bad) || read != one) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02X", b);
          return tl::make_unexpected("its coding line names " + name + ", whose byte " + hex +
                                     " sitepatch cannot read as Python does (as ASCII): the text it would edit could "
                                     "differ from the code Python runs");
        }
      }
    }
  }
  c.cr_only = bytes.find('\r') != std::string_view::npos && bytes.find('\n') == std::string_view::npos;
  return c;
}

tl::expected<std::string, std::string> decode(std::string_view bytes, const Codec& codec) {
  std::string text;
  if (codec.iconv.empty()) {
    if (auto bad = util::first_invalid_utf8(bytes))
      return tl::make_unexpected(byte_error(bytes, *bad, "UTF-8"));
    if (!codec.cr_only) return std::string(bytes);
    text = std::string(bytes);
  } else {
    size_t bad = 0;
    if (!convert(bytes, "UTF-8", codec.iconv, text, bad)) {
      if (bad >= bytes.size()) return tl::make_unexpected("its text is cut short in " + codec.name);
      return tl::make_unexpected(byte_error(bytes, bad, codec.name));
    }
  }
  if (codec.cr_only) std::replace(text.begin(), text.end(), '\r', '\n');
  return text;
}

tl::expected<std::string, std::string> encode(std::string_view text, const Codec& codec) {
  std::string lf;
  if (codec.cr_only) {
    lf = std::string(text);
    std::replace(lf.begin(), lf.end(), '\n', '\r');
    text = lf;
  }
  if (codec.iconv.empty()) return std::string(text);
  std::string out;
  size_t bad = 0;
  if (!convert(text, codec.iconv, "UTF-8", out, bad))
    return tl::make_unexpected(codec.name + " cannot hold " +
                               (bad < text.size() ? describe_char(text, bad) : std::string("the text")));
  return out;
}

std::string unencodable(std::string_view text, const Codec& codec) {
  if (codec.iconv.empty()) return "";
  std::string out;
  size_t bad = 0;
  if (convert(text, codec.iconv, "UTF-8", out, bad)) return "";
  return bad < text.size() ? describe_char(text, bad) : "a character";
}

}  // namespace sitepatch::python::encoding
