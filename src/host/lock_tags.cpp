// The tags a writer's lock file names: how the next writer tells the temps a killed
// command left from files that only look like them (a user's own `.x.sitepatch-y.tmp`).
#include <cctype>

#include "host/local_files.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::host {
namespace {

constexpr size_t kMaxTags = 32;

bool is_tag(std::string_view w) {
  if (w.size() != 8) return false;
  for (char c : w)
    if (!std::islower(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::string lock_text(long pid, const std::string& tag, const std::vector<std::string>& earlier) {
  std::string out = std::to_string(pid) + " " + tag + "\n";
  for (auto& t : earlier) out += t + "\n";
  return out;
}

std::vector<std::string> lock_tags(std::string_view text) {
  std::vector<std::string> out;
  bool first = true;
  for (auto& line : util::split(text, '\n')) {
    auto words = util::split(util::trim(line), ' ');
    // The first line is "<pid> <tag>"; a lock file from before tags holds the pid alone.
    std::string w = first ? (words.size() > 1 ? words[1] : "") : (words.empty() ? "" : words[0]);
    first = false;
    if (is_tag(w) && out.size() < kMaxTags) out.push_back(w);
  }
  return out;
}

bool left_by(std::string_view name, const std::vector<std::string>& tags) {
  std::string_view tag = util::temp_tag_of(name);
  for (auto& t : tags)
    if (tag.size() > t.size() && tag.substr(0, t.size()) == t) return true;
  return false;
}

}  // namespace sitepatch::host
