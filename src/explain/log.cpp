// Reading dynamo's three ways of reporting a break. Each format is cut into records
// (one break each); every record's text is then read the same way (frames.cpp): the
// reason, the explanation, the operation, the frames.
#include "sitepatch/explain/log.hpp"

#include <algorithm>

#include "log_impl.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::explain {

const char* to_string(Format f) {
  switch (f) {
    case Format::exception: return "exception";
    case Format::graph_breaks: return "graph_breaks";
    case Format::explain: return "explain";
  }
  return "?";
}

namespace detail {

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> out;
  size_t start = 0;
  int number = 1;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back({std::string(l), number++});
    start = end + 1;
  }
  return out;
}

bool indented(const std::string& l) { return !l.empty() && (l[0] == ' ' || l[0] == '\t'); }
bool blank(const std::string& l) { return util::trim(l).empty(); }

}  // namespace detail

namespace {

using detail::blank;
using detail::indented;
using detail::Line;

constexpr std::string_view kUnsupported = "torch._dynamo.exc.Unsupported: ";
constexpr std::string_view kGraphBreaks = "[__graph_breaks]";

std::string ends_first(const std::vector<Line>& lines, size_t j) {
  return j >= lines.size() ? ": the log ends first" : "";
}

// The exception's message without its "torch._dynamo.exc.Unsupported: " (a program that
// printed str(e)): a line, then indented lines with dynamo's "Explanation:", then "from
// user code:".
bool headerless_exception(const std::vector<Line>& lines, size_t i) {
  const std::string& first = lines[i].text;
  if (blank(first) || indented(first)) return false;
  bool explained = false;
  for (size_t j = i + 1; j < lines.size(); ++j) {
    const std::string& l = lines[j].text;
    if (util::trim(l) == "from user code:") return explained;
    if (!blank(l) && !indented(l)) return false;
    explained = explained || util::starts_with(util::trim(l), "Explanation: ");
  }
  return false;
}

// `torch._dynamo.exc.Unsupported: REASON`, its indented lines, then "from user code:"
// and the frames, which end at the first line that is neither a frame nor its code.
size_t read_exception(const std::vector<Line>& lines, size_t i, std::vector<Break>& out) {
  const std::string& first = lines[i].text;
  size_t at = first.find(kUnsupported);
  std::vector<std::string> body{at == std::string::npos ? first : first.substr(at + kUnsupported.size())};
  bool stack = false;
  size_t j = i + 1;
  for (; j < lines.size(); ++j) {
    const std::string& l = lines[j].text;
    if (util::trim(l) == "from user code:") {
      stack = true;
      body.push_back("User code traceback:");
      for (++j; j < lines.size() && indented(lines[j].text); ++j) body.push_back(lines[j].text);
      break;
    }
    if (!blank(l) && !indented(l)) break;
    body.push_back(l);
  }
  Break b = detail::read_record(body);
  b.format = Format::exception;
  b.log_line = lines[i].number;
  if (!stack) b.damage.push_back("its user stack (\"from user code:\") is missing" + ends_first(lines, j));
  else if (b.frames.empty()) b.damage.push_back("no frame follows \"from user code:\"" + ends_first(lines, j));
  detail::check_text(lines, i, j, b);
  out.push_back(std::move(b));
  return j;
}

// What follows `[__graph_breaks] ` on a TORCH_LOGS line, or nullopt for another line.
std::optional<std::string> graph_breaks_payload(const std::string& l) {
  size_t at = l.find(kGraphBreaks);
  if (at == std::string::npos) return std::nullopt;
  std::string rest = l.substr(at + kGraphBreaks.size());
  if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
  return rest;
}

// One TORCH_LOGS=graph_breaks record: "Graph break ... in user code at FILE:LINE" and
// the graph_breaks lines after it, up to the next record or another kind of line.
size_t read_graph_break(const std::vector<Line>& lines, size_t i, std::vector<Break>& out) {
  std::string head = *graph_breaks_payload(lines[i].text);
  std::vector<std::string> body;
  // Older torch: "Graph break: from user code at:" and the frames right below it.
  if (head.find("from user code at:") != std::string::npos) body.push_back("User code traceback:");
  size_t j = i + 1;
  for (; j < lines.size(); ++j) {
    auto p = graph_breaks_payload(lines[j].text);
    if (!p || util::starts_with(*p, "Graph break")) break;
    body.push_back(*p);
  }
  Break b = detail::read_record(body);
  b.format = Format::graph_breaks;
  b.log_line = lines[i].number;
  b.suppressed = head.find("user stack suppressed") != std::string::npos;
  size_t in = head.find(" in user code at ");
  if (in != std::string::npos) b.at = util::trim(head.substr(in + 17));
  if (!b.suppressed && b.frames.empty())
    b.damage.push_back("no frame of its user code traceback is in the log" + ends_first(lines, j));
  // The header names the innermost frame: a stack that stops short of it was cut.
  else if (std::string last = b.frames.empty() ? "" : b.frames.back().file + ":" + std::to_string(b.frames.back().line);
           !b.suppressed && !b.at.empty() && last != b.at)
    b.damage.push_back("its user code traceback stops at " + last + ", before " + b.at +
                       " where it broke: frames are missing" + ends_first(lines, j));
  else if (b.suppressed && b.at.empty())
    b.damage.push_back("its header does not say where in user code it broke");
  detail::check_text(lines, i, j, b);
  out.push_back(std::move(b));
  return j;
}

// torch._dynamo.explain's "Break Reason N:" sections, up to the first line that is not
// indented (the next part of its report).
size_t read_explain(const std::vector<Line>& lines, size_t i, std::vector<Break>& out,
                    std::vector<LogDamage>& damage) {
  size_t j = i + 1;
  int read = 0;
  while (j < lines.size() && (blank(lines[j].text) || indented(lines[j].text))) {
    std::string t = util::trim(lines[j].text);
    if (!util::starts_with(t, "Break Reason ")) {
      // Only a section's own lines follow "Break Reasons:": one before the first
      // section is a section whose "Break Reason N:" line was damaged.
      if (!t.empty() && (damage.empty() || damage.back().log_line != lines[i].number))
        damage.push_back({lines[i].number, lines[j].number,
                          "a break reason whose \"Break Reason N:\" line is missing or damaged"});
      ++j;
      continue;
    }
    size_t start = j;
    std::vector<std::string> body;
    for (++j; j < lines.size() && (blank(lines[j].text) || indented(lines[j].text)); ++j) {
      std::string u = util::trim(lines[j].text);
      if (util::starts_with(u, "Break Reason ")) break;
      if (detail::near_marker(u, "Break Reason ") && u.size() < 40)
        body.push_back("Damaged: the next break's \"Break Reason N:\" line is damaged: " + util::printable(u));
      if (util::starts_with(u, "Reason: ")) u = u.substr(8);
      else if (u == "User Stack:") u = "User code traceback:";
      body.push_back(u);
    }
    Break b = detail::read_record(body);
    b.format = Format::explain;
    b.log_line = lines[start].number;
    if (b.frames.empty()) b.damage.push_back("no frame of its \"User Stack:\" is in the log" + ends_first(lines, j));
    detail::check_text(lines, start, j, b);
    out.push_back(std::move(b));
    ++read;
  }
  if (read == 0) damage.push_back({lines[i].number, lines[i].number, "\"Break Reasons:\" with no break reason below it"});
  return j;
}

bool same_frames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].file != b[k].file || a[k].line != b[k].line || a[k].function != b[k].function) return false;
  return true;
}

// Whether `shorter` is the innermost part of `longer` (the exception's "from user
// code:" starts at the compiled frame, graph_breaks' traceback at the script).
bool ends_with_frames(const std::vector<Frame>& longer, const std::vector<Frame>& shorter) {
  if (shorter.empty() || shorter.size() > longer.size()) return false;
  std::vector<Frame> tail(longer.end() - shorter.size(), longer.end());
  return same_frames(tail, shorter);
}

std::string innermost_at(const Break& b) {
  if (!b.at.empty() || b.frames.empty()) return b.at;
  return b.frames.back().file + ":" + std::to_string(b.frames.back().line);
}

// Repeats folded into the break they repeat: a suppressed record into the break at the
// same place with the same operation; the same stack shown twice into its first showing.
std::vector<Break> merge(std::vector<Break> all) {
  std::vector<Break> out;
  for (auto& b : all) {
    auto same = std::find_if(out.begin(), out.end(), [&](const Break& o) { return same_break(o, b); });
    if (same == out.end()) {
      out.push_back(std::move(b));
      continue;
    }
    ++same->repeats;
    if (b.frames.size() > same->frames.size()) {
      same->frames = std::move(b.frames);
      same->suppressed = false;
    }
    if (same->at.empty()) same->at = b.at;
    if (same->explanation.empty()) same->explanation = b.explanation;
    for (auto& h : b.hints)
      if (std::find(same->hints.begin(), same->hints.end(), h) == same->hints.end()) same->hints.push_back(h);
    // A damaged repeat still says the log is damaged.
    for (auto& d : b.damage) same->damage.push_back("a repeat at line " + std::to_string(b.log_line) + ": " + d);
  }
  return out;
}

}  // namespace

namespace {

// A log is text anyone may write, and everything read from it ends up on a terminal (a
// reason, a frame, a file name: ESC is allowed in a log line, and OSC 52 writes the
// clipboard) or in a recipe's comments: escaped once, here, for every reader after.
void printable_only(LogReading& r) {
  auto clean = [](std::string& s) { s = util::printable(s); };
  for (auto& b : r.breaks) {
    for (auto* s : {&b.reason, &b.explanation, &b.operation, &b.at}) clean(*s);
    for (auto& h : b.hints) clean(h);
    for (auto& d : b.damage) clean(d);
    for (auto& f : b.frames)
      for (auto* s : {&f.file, &f.function, &f.code}) clean(*s);
  }
  for (auto& d : r.damage) clean(d.what);
}

}  // namespace

LogReading read_log(std::string_view text) {
  std::vector<Line> lines = detail::split_lines(text);
  std::vector<Break> found;
  std::vector<LogDamage> damage;
  for (size_t i = 0; i < lines.size();) {
    const std::string& l = lines[i].text;
    if (l.find(kUnsupported) != std::string::npos) {
      i = read_exception(lines, i, found);
    } else if (auto p = graph_breaks_payload(l); p && util::starts_with(*p, "Graph break")) {
      i = read_graph_break(lines, i, found);
    } else if (util::trim(l) == "Break Reasons:") {
      i = read_explain(lines, i, found, damage);
    } else if (std::string what = detail::stray(l); what.empty() && headerless_exception(lines, i)) {
      i = read_exception(lines, i, found);
    } else {
      // One note per damaged stretch: stray lines a few lines apart are one record's.
      if (!what.empty()) {
        int n = lines[i].number;
        if (damage.empty() || damage.back().what != what || n - damage.back().last_line > 3)
          damage.push_back({n, n, what});
        else
          damage.back().last_line = n;
      }
      ++i;
    }
  }
  // No break at all, and bytes that are not text: the damage may have hidden a break
  // whose every marker it hit.
  if (found.empty() && damage.empty()) {
    auto bad = std::find_if(lines.begin(), lines.end(), [](const Line& l) { return detail::not_text(l.text); });
    if (bad != lines.end())
      damage.push_back({bad->number, bad->number,
                        "bytes that are not text, and no break read: a damaged break may be hidden there"});
  }
  LogReading out{merge(std::move(found)), std::move(damage)};
  printable_only(out);
  return out;
}

std::vector<Break> parse_log(std::string_view text) { return read_log(text).breaks; }

bool same_break(const Break& a, const Break& b) {
  if (a.operation != b.operation) return false;
  if (a.frames.empty() || b.frames.empty()) return innermost_at(a) == innermost_at(b) && !innermost_at(b).empty();
  return ends_with_frames(a.frames, b.frames) || ends_with_frames(b.frames, a.frames);
}

}  // namespace sitepatch::explain
