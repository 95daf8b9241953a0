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

}  // namespace sitepatch::engine
