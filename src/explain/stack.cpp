// A frame's place judged from its path: dynamo's stacks mix the user's script,
// torch's own call machinery, the library and the standard library.
#include "sitepatch/explain/stack.hpp"

#include <regex>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::explain {

const char* to_string(FrameKind k) {
  switch (k) {
    case FrameKind::user: return "user";
    case FrameKind::library: return "library";
    case FrameKind::torch: return "torch";
    case FrameKind::stdlib: return "stdlib";
  }
  return "?";
}

std::string below_site(std::string_view file) {
  size_t best = std::string_view::npos, len = 0;
  for (std::string_view seg : {"/site-packages/", "/dist-packages/"}) {
    size_t at = file.rfind(seg);
    if (at != std::string_view::npos && (best == std::string_view::npos || at > best)) {
      best = at;
      len = seg.size();
    }
  }
  if (best == std::string_view::npos) return "";
  return std::string(file.substr(best + len));
}

std::string stdlib_module(std::string_view file) {
  if (util::starts_with(file, "<frozen ") && util::ends_with(file, ">"))
    return std::string(file.substr(8, file.size() - 9));
  if (!below_site(file).empty()) return "";
  static const std::regex re(R"re(/lib/python\d+(\.\d+)?/(.+)\.py$)re");
  std::cmatch m;
  std::string f(file);
  if (!std::regex_search(f.c_str(), m, re)) return "";
  std::string rel = m[2].str();
  if (util::ends_with(rel, "/__init__")) rel.resize(rel.size() - 9);
  for (auto& c : rel)
    if (c == '/') c = '.';
  return rel;
}

FrameKind kind_of(const Frame& f) {
  std::string rel = below_site(f.file);
  // A function dynamo skips is where a fix can go, in torch too (said so).
  if (f.skipped && !rel.empty()) return FrameKind::library;
  if (!rel.empty()) return util::starts_with(rel, "torch/") ? FrameKind::torch : FrameKind::library;
  if (!stdlib_module(f.file).empty()) return FrameKind::stdlib;
  return FrameKind::user;
}

int entry_frame(const Break& b) {
  int last_user = -1;
  for (size_t i = 0; i < b.frames.size(); ++i)
    if (kind_of(b.frames[i]) == FrameKind::user) last_user = int(i);
  for (size_t i = size_t(last_user + 1); i < b.frames.size(); ++i)
    if (kind_of(b.frames[i]) == FrameKind::library) return int(i);
  return -1;
}

int last_library_frame(const Break& b) {
  int entry = entry_frame(b);
  if (entry < 0) return -1;
  int last = entry;
  for (size_t i = size_t(entry); i < b.frames.size(); ++i)
    if (kind_of(b.frames[i]) == FrameKind::library) last = int(i);
  return last;
}

}  // namespace sitepatch::explain
