// sitepatch help --guide [TOPIC]: the guides the binary carries (docs/guide/*.md), as
// `git help` opens a manual: the text through the pager on a terminal, plain otherwise.
#include "guides.hpp"

#include <iostream>

#include "pager.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch_guides.hpp"

namespace sitepatch::cli {

namespace {

// The guide's title: its first line without the `# `.
std::string title(const char* text) {
  std::string first(text, std::string(text).find('\n'));
  return first.rfind("# ", 0) == 0 ? first.substr(2) : first;
}

}  // namespace

std::vector<std::string> guide_names() {
  std::vector<std::string> out;
  for (auto& g : embedded::guides)
    if (std::string(g.name) != "README") out.push_back(g.name);
  return out;
}

int show_guide(const GlobalOptions& g, const std::string& topic) {
  if (topic.empty()) {
    std::cout << "Guides (sitepatch help --guide TOPIC):\n";
    for (auto& guide : embedded::guides)
      if (std::string(guide.name) != "README")
        std::cout << "  " << guide.name << std::string(14 - std::min<size_t>(13, std::string(guide.name).size()), ' ')
                  << title(guide.text) << "\n";
    return int(Exit::ok);
  }
  for (auto& guide : embedded::guides)
    if (topic == guide.name || (topic == "index" && std::string(guide.name) == "README")) {
      start_pager(g);
      std::cout << guide.text;
      std::cout.flush();
      end_pager();
      return int(Exit::ok);
    }
  auto near = util::nearest(topic, guide_names(), 1);
  throw Error("no guide `" + topic + "`" + (near.empty() ? "" : "; did you mean `" + near[0] + "`?") +
                  " The guides: " + util::join(guide_names(), ", "),
              Exit::usage);
}

}  // namespace sitepatch::cli
