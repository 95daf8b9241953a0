// What explain --run may call a constant to dynamo: the constancy analysis says an
// argument rests on a tensor's metadata (python/constancy_guards.cpp); whether this
// environment's dynamo holds that as a constant under assume_constant_result is asked
// of its own torch (engine/audit/calibrate_guards.cpp), once per search and then kept.
#include <spdlog/spdlog.h>

#include "engine/proofs/run_impl.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

const GuardCalibration& GuardGate::calibration() {
  if (!cal_) {
    cal_ = calibrate_guards(s_);
    if (!cal_->error.empty())
      spdlog::info("what dynamo holds as a constant is not probed ({}): a tensor's metadata is taken as held",
                   cal_->error);
  }
  return *cal_;
}

std::string GuardGate::source() {
  const GuardCalibration& c = calibration();
  if (!c.error.empty()) return "assumed, not probed: " + c.error;
  return "probed in torch " + c.torch + " here";
}

bool GuardGate::holds(const std::string& text, const std::vector<std::string>& keys, std::string& why, bool& sized) {
  const GuardCalibration& c = calibration();
  // Without an answer the analysis stands as it was: the run is each candidate's test.
  if (!c.error.empty()) return true;
  for (const std::string& key : keys) {
    auto it = c.guards.find(key);
    std::string what = "`" + util::printable(text) + "`";
    if (it == c.guards.end()) {
      why = what + " rests on a tensor's " + key + ", which no probe asked this torch about";
      return false;
    }
    const GuardProbe& g = it->second;
    if (g.state == GuardProbe::held) continue;
    if (g.state == GuardProbe::held_static) {
      sized = true;
      size_why_ = g.why;
      continue;
    }
    why = what + ": torch " + c.torch + "'s dynamo does not hold a tensor's " + key +
          " as a constant for assume_constant_result (" + guard_state_name(g.state) +
          (g.why.empty() ? "" : ": " + g.why) + ")";
    return false;
  }
  return true;
}

std::string GuardGate::size_condition(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i ? i + 1 == names.size() ? " and " : ", " : "") + ("`" + util::printable(names[i]) + "`");
  return list + (names.size() == 1 ? " is" : " are") +
         " held while the tensors keep their sizes: a call with other sizes makes a size dynamic and fails under "
         "fullgraph=True (torch " + calibration().torch + " here: " + size_why_ +
         "); compile with dynamic=False, or torch._dynamo.mark_static on those dimensions, to recompile per size "
         "instead";
}

bool GuardGate::holds_method(std::string& why) {
  const GuardCalibration& c = calibration();
  if (!c.error.empty()) return true;
  auto it = c.guards.find(kMethodOfModuleObject);
  if (it != c.guards.end() && it->second.state == GuardProbe::held) return true;
  why = "torch " + c.torch + "'s dynamo does not keep a method's result per module-level object (" +
        (it == c.guards.end() ? std::string("not probed")
                              : guard_state_name(it->second.state) + (it->second.why.empty() ? "" : ": " + it->second.why)) +
        ")";
  return false;
}

}  // namespace sitepatch::engine
