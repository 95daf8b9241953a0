// explain --run: what a run's processes said at exit, read from its output: dynamo's
// counts (try_hook.py) and the differential proof's findings (diff_hook.py), summed over
// every Python process the command started.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "sitepatch/engine/explain_run.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

constexpr const char* kCountsMark = "sitepatch-dynamo-counts: ";
constexpr const char* kDiffMark = "sitepatch-diff: ";

// Each line of `text` that starts with `mark`, its JSON read; lines that do not parse
// (a process's own output that happens to hold the mark) are skipped.
std::vector<nlohmann::json> marked_lines(const std::string& text, const std::string& mark) {
  std::vector<nlohmann::json> out;
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) {
    if (at > 0 && text[at - 1] != '\n') continue;
    size_t end = text.find('\n', at);
    auto j = nlohmann::json::parse(text.substr(at + mark.size(), end == std::string::npos ? end : end - at - mark.size()),
                                   nullptr, false);
    if (!j.is_discarded() && j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

int number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : 0;
}

}  // namespace

void read_counts(const std::string& text, RunCounts& into) {
  for (auto& j : marked_lines(text, kCountsMark)) {
    if (!j.contains("graphs")) continue;
    into.graphs = std::max(into.graphs, 0) + number(j, "graphs");
    into.graph_breaks = std::max(into.graph_breaks, 0) + number(j, "graph_breaks");
  }
  Checked& c = into.checked;
  for (auto& j : marked_lines(text, kDiffMark)) {
    c.calls = std::max(c.calls, 0) + number(j, "calls");
    c.vs_record += number(j, "vs_record");
    c.vs_eager += number(j, "vs_eager");
    c.recorded += number(j, "recorded");
    if (c.mismatch.empty() && j.contains("mismatch") && j["mismatch"].is_string())
      c.mismatch = util::printable(j["mismatch"].get<std::string>());
    if (j.contains("notes") && j["notes"].is_array())
      for (auto& n : j["notes"])
        if (n.is_string() && c.notes.size() < 4) c.notes.push_back(util::printable(n.get<std::string>()));
  }
}

std::string Checked::how() const {
  if (calls <= 0)
    return "compiles: the command called no compiled function on tensors, so that it compiles is all that was shown";
  std::string out = "compiled equals eager on " + std::to_string(calls) + (calls == 1 ? " call" : " calls");
  std::vector<std::string> against;
  if (vs_record > 0) against.push_back(std::to_string(vs_record) + " against the unpatched program's outputs");
  if (vs_eager > 0) against.push_back(std::to_string(vs_eager) + " against the patched code run eagerly");
  if (!against.empty()) out += " (" + util::join(against, ", ") + ")";
  return out;
}

}  // namespace sitepatch::engine
