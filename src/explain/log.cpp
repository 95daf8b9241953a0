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

// `torch._dynamo.exc.Unsupported: REASON`, its indented lines, then "from user code:"
// and the frames, which end at the first line that is neither a frame nor its code.
size_t read_exception(const std::vector<Line>& lines, size_t i, std::vector<Break>& out) {
  const std::string& first = lines[i].text;
  size_t at = first.find(kUnsupported);
  std::vector<std::string> body{first.substr(at + kUnsupported.size())};
  size_t j = i + 1;
  for (; j < lines.size(); ++j) {
    const std::string& l = lines[j].text;
    if (util::trim(l) == "from user code:") {
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
  out.push_back(std::move(b));
  return j;
}

// torch._dynamo.explain's "Break Reason N:" sections, up to the first line that is not
// indented (the next part of its report).
size_t read_explain(const std::vector<Line>& lines, size_t i, std::vector<Break>& out) {
  size_t j = i + 1;
  while (j < lines.size() && (blank(lines[j].text) || indented(lines[j].text))) {
    std::string t = util::trim(lines[j].text);
    if (!util::starts_with(t, "Break Reason ")) {
      ++j;
      continue;
    }
    size_t start = j;
    std::vector<std::string> body;
    for (++j; j < lines.size() && (blank(lines[j].text) || indented(lines[j].text)); ++j) {
      std::string u = util::trim(lines[j].text);
      if (util::starts_with(u, "Break Reason ")) break;
      if (util::starts_with(u, "Reason: ")) u = u.substr(8);
      else if (u == "User Stack:") u = "User code traceback:";
      body.push_back(u);
    }
    Break b = detail::read_record(body);
    b.format = Format::explain;
    b.log_line = lines[start].number;
    out.push_back(std::move(b));
  }
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
    auto same = std::find_if(out.begin(), out.end(), [&](const Break& o) {
      if (o.operation != b.operation) return false;
      if (b.frames.empty() || o.frames.empty()) return innermost_at(o) == innermost_at(b) && !innermost_at(b).empty();
      return ends_with_frames(o.frames, b.frames) || ends_with_frames(b.frames, o.frames);
    });
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
  }
  return out;
}

}  // namespace

std::vector<Break> parse_log(std::string_view text) {
  std::vector<Line> lines = detail::split_lines(text);
  std::vector<Break> found;
  for (size_t i = 0; i < lines.size();) {
    const std::string& l = lines[i].text;
    if (l.find(kUnsupported) != std::string::npos) {
      i = read_exception(lines, i, found);
    } else if (auto p = graph_breaks_payload(l); p && util::starts_with(*p, "Graph break")) {
      i = read_graph_break(lines, i, found);
    } else if (util::trim(l) == "Break Reasons:") {
      i = read_explain(lines, i, found);
    } else {
      ++i;
    }
  }
  return merge(std::move(found));
}

}  // namespace sitepatch::explain
