// Signs that a log was cut or damaged, so that explain never reads a broken record as
// a clean one: bytes that are not text, and lines that are a record's in all but a few
// bytes (a flipped byte in "torch._dynamo.exc.Unsupported:" hides the whole break).
#include <algorithm>
#include <array>

#include "log_impl.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch/util/utf8.hpp"

namespace sitepatch::explain::detail {

namespace {

// Not UTF-8, or a control character other than a tab or ESC (a terminal's colours).
// Dynamo writes neither.
}  // namespace

bool not_text(const std::string& l) {
  if (util::first_invalid_utf8(l)) return true;
  return std::any_of(l.begin(), l.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && u != '\t' && u != 0x1b) || u == 0x7f;
  });
}

namespace {

// Whether some stretch of `text` as long as `marker` agrees with it in at least three
// of four places. A stretch stops being compared once a quarter of it disagrees, so
// ordinary text costs a few comparisons per position.
bool near(std::string_view text, std::string_view marker) {
  if (text.size() < marker.size() || marker.empty()) return false;
  size_t allowed = marker.size() / 4;
  for (size_t at = 0; at + marker.size() <= text.size(); ++at) {
    size_t wrong = 0, k = 0;
    for (; k < marker.size() && wrong <= allowed; ++k) wrong += text[at + k] != marker[k];
    if (k == marker.size() && wrong <= allowed) return true;
  }
  return false;
}

// A (trimmed) line that starts with `marker` but for a few bytes; a damaged line end
// may have joined the next line to it.
bool near_start(std::string_view trimmed, std::string_view marker) {
  return near(trimmed.substr(0, marker.size() + 3), marker);
}

}  // namespace

bool near_marker(std::string_view text, std::string_view marker) { return near(text, marker); }

void check_text(const std::vector<Line>& lines, size_t from, size_t to, Break& b) {
  std::vector<std::string> bad;
  for (size_t k = from; k < to && k < lines.size(); ++k)
    if (not_text(lines[k].text)) bad.push_back(std::to_string(lines[k].number));
  if (bad.empty()) return;
  size_t shown = std::min<size_t>(bad.size(), 5);
  std::string list = util::join(std::vector<std::string>(bad.begin(), bad.begin() + long(shown)), ", ");
  if (bad.size() > shown) list += " and " + std::to_string(bad.size() - shown) + " more";
  b.damage.push_back((bad.size() == 1 ? "line " : "lines ") + list + " of it hold bytes that are not text");
}

std::string stray(const std::string& l) {
  if (l.size() > 4096) return "";  // a printed tensor, not a record's line
  std::string t = util::trim(l);
  if (l.find("[__graph_breaks]") != std::string::npos) {
    if (t.size() > 16 && t.substr(t.size() - 16) == "[__graph_breaks]") return "";  // an empty record line
    return "graph_breaks output outside any record (the record's \"Graph break\" line is missing or damaged)";
  }
  if (t == "from user code:")
    return "a user stack (\"from user code:\") without its torch._dynamo.exc.Unsupported line";
  // Each of these lines starts a record: one damaged past reading hides the record.
  static const std::array<std::string_view, 2> anywhere = {"torch._dynamo.exc.Unsupported: ", "[__graph_breaks]"};
  for (auto m : anywhere)
    if (near(l, m)) return "a damaged \"" + util::trim(std::string(m)) + "\" line: the break it starts cannot be read";
  static const std::array<std::string_view, 3> whole = {"from user code:", "Break Reasons:", "User code traceback:"};
  for (auto m : whole)
    if (near_start(t, m)) return "a damaged \"" + std::string(m) + "\" line: the break it belongs to cannot be read";
  return "";
}

}  // namespace sitepatch::explain::detail
