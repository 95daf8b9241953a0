// One break's text, whichever format carried it: dynamo writes the same message
// (reason, Explanation, Hint, Developer debug context) and a stack of frames.
#include <algorithm>
#include <cctype>
#include <regex>

#include "log_impl.hpp"
#include "sitepatch/explain/stack.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::explain::detail {

namespace {

// Dynamo's words around the reason rather than the reason itself: the graph_breaks
// header of a break met while tracing a call, or of a frame skipped after one.
bool is_preamble(const std::string& t) {
  return util::starts_with(t, "Encountered graph break when attempting") ||
         util::starts_with(t, "Failed to handle graph break gracefully");
}

// Newer torch links each kind of break to a page of its graph-break site:
// "For more details about this graph break, please visit: https://.../gb/gb0007.html".
constexpr const char* kMoreDetails = "For more details about this graph break, please visit: ";

void graph_break_site(const std::string& url, Break& b) {
  static const std::regex id(R"(/gb/(gb\d+)\.html$)");
  std::smatch m;
  std::string u = util::trim(url);
  if (!std::regex_search(u, m, id)) return;
  b.graph_break_url = u;
  std::string gb = m[1].str();
  for (char& c : gb) c = char(std::toupper(static_cast<unsigned char>(c)));
  b.graph_break_id = gb;
}

// "Attempted to call function marked as skipped" of a Python function below a site folder
// (`torch.utils.cpp_extension.is_ninja_available`), called where no library frame is on
// the stack (the user's code, torch's): the skipped function is the nearest place a fix
// can go, so it becomes the stack's last frame. Its file is the explanation's "in file
// `...`"; its line is found when the file is read.
void add_skipped_function(Break& b) {
  static const std::regex in_file(R"(the function `([\w<>]+)` in file `([^`]+\.py)`)");
  std::smatch m;
  if (b.explanation.size() > 4096 || !std::regex_search(b.explanation, m, in_file)) return;
  if (below_site(m[2].str()).empty() || b.frames.empty() || entry_frame(b) >= 0) return;
  size_t dot = b.operation.rfind('.');
  std::string qualname = dot == std::string::npos ? m[1].str() : b.operation.substr(dot + 1);
  if (qualname != m[1].str()) return;
  Frame f;
  f.file = m[2].str();
  f.function = qualname;
  f.skipped = true;
  b.frames.push_back(std::move(f));
}

// The operation a "Developer debug context:" line names:
//   "module: _thread, qualname: allocate_lock, skip reason: ..." -> "_thread.allocate_lock"
//   "builtin print [<class ...>] False"                          -> "print"
//   "method: <Logger lib (WARNING)>.warning, args: ..."          -> "logging.Logger.warning"
//   "call_method TensorVariable() item () {}"                    -> "torch.Tensor.item"
//   "call_method TensorVariable() to_list"                       -> "torch.Tensor.tolist"
std::string debug_context_operation(const std::string& t) {
  if (t.size() > 4096) return "";
  static const std::regex qualname(R"(module: ([\w.]+), qualname: ([\w.<>]+))");
  static const std::regex builtin(R"(^Developer debug context: builtin (\w+) )");
  static const std::regex logger(R"(method: <(?:Root)?Logger [^>]*>\.(\w+))");
  static const std::regex tensor(R"(call_method TensorVariable\(\) (\w+))");
  std::smatch m;
  if (std::regex_search(t, m, qualname)) return m[1].str() + "." + m[2].str();
  if (std::regex_search(t, m, builtin)) return m[1].str();
  if (std::regex_search(t, m, logger)) return "logging.Logger." + m[1].str();
  if (std::regex_search(t, m, tensor)) return "torch.Tensor." + (m[1].str() == "to_list" ? "tolist" : m[1].str());
  return "";
}

// "... trace the builtin `posix.stat.` ..." -> "posix.stat"
// "... trace builtin operator `print` with argument types ..." -> "print"
std::string explanation_operation(const std::string& t) {
  if (t.size() > 4096) return "";
  static const std::regex re(R"(the builtin `([\w.]+?)\.?`)");
  static const std::regex op(R"(builtin operator `([\w.]+)`)");
  std::smatch m;
  if (std::regex_search(t, m, re)) return m[1].str();
  if (std::regex_search(t, m, op)) return m[1].str();
  return "";
}

// Python 3.11's marks under the code of a frame ("    ^^^^^~~~~").
bool carets(const std::string& t) { return t.find_first_not_of("^~ ") == std::string::npos; }

// A line among the frames that is neither a frame nor the code of the one above: a frame
// whose "File ..." line was damaged, so the stack read is not the stack dynamo printed.
void unreadable_frame(Break& b, const std::string& t) {
  std::string shown = util::printable(t.size() > 60 ? t.substr(0, 60) + "..." : t);
  b.damage.push_back("an unreadable line among its frames: " + shown);
}

}  // namespace

std::optional<Frame> frame_line(const std::string& line) {
  // libstdc++'s regex recurses per character: a long line (a tensor printed in a log)
  // is no frame, and must not reach it.
  if (line.size() > 4096 || (line.find("File \"") == std::string::npos && line.find("<FrameSummary file ") == std::string::npos))
    return std::nullopt;
  static const std::regex file_re(R"re(^\s*File "(.*)", line (\d+), in (.+?)\s*$)re");
  static const std::regex summary_re(R"(^\s*<FrameSummary file (.*), line (\d+) in (.+?)>\s*$)");
  std::smatch m;
  if (std::regex_match(line, m, file_re) || std::regex_match(line, m, summary_re)) {
    Frame f;
    f.file = m[1].str();
    f.line = std::stoi(m[2].str());
    f.function = m[3].str();
    return f;
  }
  return std::nullopt;
}

Break read_record(const std::vector<std::string>& body) {
  Break b;
  bool in_frames = false;
  std::string fallback_operation;
  bool internal = false;  // older torch prints its own traceback after the user's frames
  for (const std::string& raw : body) {
    std::string t = util::trim(raw);
    if (util::starts_with(t, "Traceback (most recent call last)")) {
      in_frames = false;
      internal = true;
      continue;
    }
    if (internal) {
      size_t at = t.find("Unsupported: ");
      if (b.reason.empty() && at != std::string::npos && !frame_line(raw)) b.reason = t.substr(at + 13);
      continue;
    }
    if (in_frames && t == "User code traceback:") {
      b.damage.push_back("two user stacks in one break: the next break's first line is damaged");
      continue;
    }
    if (in_frames) {
      if (auto f = frame_line(raw)) b.frames.push_back(std::move(*f));
      else if (!t.empty() && !b.frames.empty() && b.frames.back().code.empty()) b.frames.back().code = t;
      else if (!t.empty() && !carets(t)) unreadable_frame(b, t);
      continue;
    }
    if (t.empty()) continue;
    if (t == "User code traceback:") {
      in_frames = true;
    } else if (util::starts_with(t, "Damaged: ")) {
      b.damage.push_back(t.substr(9));
    } else if (util::starts_with(t, "Hint: ")) {
      std::string hint = t.substr(6);
      if (std::find(b.hints.begin(), b.hints.end(), hint) == b.hints.end()) b.hints.push_back(std::move(hint));
    } else if (util::starts_with(t, "Explanation: ")) {
      b.explanation = t.substr(13);
      fallback_operation = explanation_operation(t);
    } else if (util::starts_with(t, "Developer debug context: ")) {
      b.operation = debug_context_operation(t);
    } else if (util::starts_with(t, kMoreDetails)) {
      graph_break_site(t.substr(std::string(kMoreDetails).size()), b);
    } else if (b.reason.empty()) {
      if (util::starts_with(t, "Graph Break Reason: ")) t = t.substr(20);
      else if (util::starts_with(t, "Reason: ")) t = t.substr(8);
      if (util::starts_with(t, "Unsupported: ")) t = t.substr(13);
      if (!is_preamble(t)) b.reason = t;
    }
  }
  if (b.operation.empty()) b.operation = fallback_operation;
  add_skipped_function(b);
  b.suppressed = b.frames.empty();
  if (b.reason.empty()) b.damage.push_back("no reason: the line that names it is missing or unreadable");
  return b;
}

}  // namespace sitepatch::explain::detail

namespace sitepatch::explain {

std::vector<std::string> useful_hints(const Break& b) {
  static const char* const kBoilerplate[] = {"report an issue", "file an issue", "third-party C/C++ Python extension",
                                             "It may be possible to write Dynamo tracing rules"};
  std::vector<std::string> out;
  for (auto& h : b.hints)
    if (std::none_of(std::begin(kBoilerplate), std::end(kBoilerplate),
                     [&](const char* w) { return h.find(w) != std::string::npos; }))
      out.push_back(h);
  return out;
}

}  // namespace sitepatch::explain
