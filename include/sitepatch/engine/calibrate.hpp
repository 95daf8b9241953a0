#pragma once
// `rules --calibrate`: each rule's probe (a line of Python doing the operation) run once
// inside torch.compile(fullgraph=True) by the environment's own torch, so that audit and
// explain stop calling a break what this torch traces. Kept per environment and torch
// version on this machine ($XDG_CACHE_HOME/sitepatch/calibration/).
#include <map>
#include <optional>
#include <string>

#include "sitepatch/audit/rules.hpp"
#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine {

struct ProbeResult {
  enum State { traced, breaks, not_run } state = not_run;
  std::string why;    // breaks: dynamo's first line; not_run: why the probe could not run eagerly
  std::string probe;  // the probe it was for (a changed probe is no result)
};

struct Calibration {
  std::string torch;   // torch.__version__ as it reported it ("2.13.0+cpu")
  std::string where;   // the environment: host and interpreter
  double seconds = 0;  // how long the run took
  std::map<std::string, ProbeResult> rules;  // by rule id; rules without a probe are absent
};

/// Runs every probe of `rules` in the environment's Python (one process) and keeps the
/// answer. Throws naming the reason when torch does not import there.
Calibration calibrate(Session& s, const audit::RuleSet& rules);

/// The calibration kept for this environment and the torch installed in it now, if any.
std::optional<Calibration> kept_calibration(Session& s);

/// `rules` without those this torch traces (as `cal` says, for the same probe); `left`
/// gets their ids.
audit::RuleSet without_traced(const audit::RuleSet& rules, const Calibration& cal, std::vector<std::string>& left);

/// What the environment's dynamo holds as a constant when a function under
/// assume_constant_result is given it: per kind of argument ("device.type", "shape[i]",
/// "size()", "shape unpacked", ...) and for a method of a module-level object
/// (kMethodOfModuleObject), probed in that Python (calibrate_guards.cpp): a function
/// that reads a file, given such a value, compiled whole and called on tensors of one
/// shape and dtype, another dtype, then other sizes; each call compared with eager.
struct GuardProbe {
  enum State {
    held,         // every call compiles and gives eager's value
    held_static,  // held while the tensors keep their sizes; a call with other sizes fails (automatic dynamic)
    breaks,       // dynamo refuses it (why: its first line)
    wrong,        // compiles, but a call gives another value than eager (why: the values)
    not_run,      // the probe could not run eagerly here
  } state = not_run;
  std::string why;
};
inline constexpr const char* kMethodOfModuleObject = "method of a module-level object";
struct GuardCalibration {
  std::string torch;   // as it reported it ("2.13.0+cpu")
  std::string error;   // why nothing was probed ("" when the probe ran)
  double seconds = 0;  // how long the probe took
  bool kept = false;   // read from this machine's cache, not probed now
  std::map<std::string, GuardProbe> guards;
};

/// The kept probe for the torch installed now, else a new one (kept for next time). An
/// environment without torch, or a probe that fails, gives `error` set and no guards.
GuardCalibration calibrate_guards(Session& s, bool use_kept = true);

/// "held", "held while sizes stay", "breaks", "wrong", "not run".
std::string guard_state_name(GuardProbe::State s);
/// As --json writes it: "held", "held_static", "breaks", "wrong", "not_run".
const char* guard_state_json(GuardProbe::State s);

}  // namespace sitepatch::engine
