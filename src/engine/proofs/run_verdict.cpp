// explain --run's verdict on one run: how it ended (the last traceback's exception)
// and whether it is better than the best so far. A run that fails another way than
// dynamo declining a construct is rejected with that reason, never kept because
// dynamo "got further".
#include <algorithm>

#include "engine/proofs/run_impl.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

// How dynamo words the break a disabled function makes where it is called: a disable
// that only moves the break there did not fix it for fullgraph=True.
constexpr const char* kDisabledCall = "torch.compiler.disable";
constexpr const char* kRaised = "Developer debug context: raised exception ";

std::string count(int v) { return v < 0 ? std::string("none") : std::to_string(v); }

}  // namespace

RunEnd run_end(const std::string& log) {
  RunEnd end;
  size_t tb = log.rfind("Traceback (most recent call last):");
  if (tb == std::string::npos) return end;
  // The exception line: the first after the traceback that is not indented.
  size_t at = log.find('\n', tb);
  while (at != std::string::npos && at + 1 < log.size()) {
    size_t start = at + 1;
    size_t stop = log.find('\n', start);
    std::string line = log.substr(start, stop == std::string::npos ? std::string::npos : stop - start);
    at = stop;
    if (line.empty() || line[0] == ' ' || line[0] == '\t') continue;
    size_t colon = line.find(": ");
    end.type = line.substr(0, colon);
    end.message = colon == std::string::npos ? "" : line.substr(colon + 2);
    if (end.type.find(' ') != std::string::npos) end.type.clear();  // no exception line after all
    break;
  }
  if (size_t r = log.find(kRaised, tb); r != std::string::npos) {
    size_t e = log.find('\n', r);
    end.raised = util::trim(log.substr(r + std::string(kRaised).size(), e == std::string::npos ? e : e - r - std::string(kRaised).size()));
  }
  return end;
}

bool improves(const RunCounts& before, const RunCounts& now, const std::vector<std::string>& gone,
              const std::vector<std::string>& new_breaks, std::string& why) {
  if (now.status != 0 && before.status == 0) {
    why = "the command failed (exit " + std::to_string(now.status) + ") where it ran before" +
          (now.failure.empty() ? "" : ": " + now.failure);
    return false;
  }
  if (now.status != 0 && !now.unsupported) {
    // Not dynamo declining a construct: the fix broke the run (InternalTorchDynamoError,
    // an exception of the library's own, a body that raises).
    why = "the run failed another way (exit " + std::to_string(now.status) + ")" +
          (now.failure.empty() ? "" : ": " + now.failure);
    return false;
  }
  if (!now.raised.empty() && now.raised != before.raised) {
    // dynamo traced into code that raises: the fix made the traced path raise where
    // the model did not.
    why = "the traced code now raises " + now.raised + " (dynamo: Observed exception)";
    return false;
  }
  if (!now.checked.mismatch.empty()) {
    // It compiles, but computes other numbers: a fake that lies, a constant that is not.
    why = "compiled differs from eager: " + now.checked.mismatch;
    return false;
  }
  if (now.compiled() && !before.compiled()) {
    why = "the command now runs and dynamo raises nothing (fullgraph=True compiles)";
    return true;
  }
  if (now.graph_breaks >= 0 && before.graph_breaks >= 0 && now.graph_breaks < before.graph_breaks) {
    why = "graph breaks " + count(before.graph_breaks) + " -> " + count(now.graph_breaks);
    return true;
  }
  bool failing = !before.compiled() && !now.compiled();
  bool moved = std::any_of(new_breaks.begin(), new_breaks.end(),
                           [](const std::string& b) { return b.find(kDisabledCall) != std::string::npos; });
  if (failing && moved) {
    // fullgraph=True stops where the disabled function is called: nothing was won.
    why = "the break only moved to where the disabled function is called";
    return false;
  }
  if (now.library_breaks < before.library_breaks) {
    why = "breaks inside libraries " + std::to_string(before.library_breaks) + " -> " +
          std::to_string(now.library_breaks);
    return true;
  }
  if (failing && !gone.empty()) {
    // fullgraph=True stops at the first break: past this one, dynamo met the next.
    why = "dynamo got past " + gone.front() + (new_breaks.empty() ? "" : " and stops at " + new_breaks.front());
    return true;
  }
  why = "no better: graph breaks " + count(before.graph_breaks) + " -> " + count(now.graph_breaks) + ", graphs " +
        count(before.graphs) + " -> " + count(now.graphs);
  return false;
}

}  // namespace sitepatch::engine
