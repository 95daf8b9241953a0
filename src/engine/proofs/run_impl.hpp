#pragma once
// Private to explain --run's files: the candidate finder (run_candidates.cpp), the
// verdict on a run (run_verdict.cpp) and the hint check (run_hints.cpp).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/engine/calibrate.hpp"
#include "sitepatch/engine/explain_run.hpp"
#include "sitepatch/python/constancy.hpp"
#include "sitepatch/python/op_seam.hpp"

namespace sitepatch::engine {

// Files read once through the host (run_candidates.cpp).
class Sources;

/// The last dotted part of a qualified name ("Cls.method" -> "method").
inline std::string last_name(const std::string& qualified) {
  size_t dot = qualified.rfind('.');
  return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

/// What observe_hook.py saw a library function do (observed_fake.cpp).
struct ObservedValue {
  bool tensor = false;
  std::string dtype, device;  // "uint8", "cpu"
  std::vector<long> shape;
};
struct ObservedCall {
  std::vector<std::pair<std::string, ObservedValue>> inputs;  // by parameter name, in order
  std::vector<ObservedValue> outputs;
  bool tuple = false;
  std::vector<std::string> mutated;  // inputs whose version counter changed
  std::vector<std::string> aliased;  // "0:x": output 0 shares x's storage
  std::vector<ObservedCall> resized;  // the same function on inputs with a dimension doubled
};
struct Observation {
  std::string function;  // module:qualified
  std::vector<ObservedCall> calls;
};

/// The observe hook's lines in a run's output.
std::vector<Observation> read_observations(const std::string& text);

/// A fake's body for a custom op from what the real function did: `return x.new_empty((x.shape[0],
/// x.shape[1] // 2), dtype=torch.uint8), ...`; "" with `why` set when no custom op fits
/// what was seen (it changed an input, returned a view or a non-tensor). `why` is set to
/// a note (static shapes) when a body is written.
std::string observed_fake(const Observation& o, const std::vector<std::string>& tensors, std::string& why);

/// What this environment's dynamo holds as a constant, probed (calibrate_guards.cpp) the
/// first time an argument of a candidate rests on it, then kept (run_guards.cpp).
class GuardGate {
 public:
  explicit GuardGate(Session& s) : s_(s) {}
  /// Whether dynamo holds `text` (an argument resting on `keys`) as a constant here:
  /// `why` says why not; `sized` is set when it is held only while sizes stay.
  bool holds(const std::string& text, const std::vector<std::string>& keys, std::string& why, bool& sized);
  /// What a constant given `names` (sizes) holds only under, for the fix's cost.
  std::string size_condition(const std::vector<std::string>& names);
  /// Whether a method's result is kept per module-level object (dynamo guards it by identity).
  bool holds_method(std::string& why);
  /// Where the answer came from, for the notes: "probed in torch 2.13.0+cpu here".
  std::string source();

 private:
  const GuardCalibration& calibration();
  Session& s_;
  std::optional<GuardCalibration> cal_;
  std::string size_why_;  // the probe's word on a size made dynamic
};

/// The candidates of a run's breaks, with a verdict on each library frame.
class CandidateFinder {
 public:
  explicit CandidateFinder(Session& s);
  ~CandidateFinder();
  /// Narrowest first: a hint's body, assume_constant_result on each frame that fits
  /// (innermost first), register-custom-op on each kernel wrapper (innermost first),
  /// disable on each library frame (innermost first); shared folders last. `notes` gets each library frame's verdict once.
  std::vector<Candidate> find(const Explanation& e, std::vector<FrameNote>* notes);
  /// What runs saw the functions do: custom-op candidates take their fakes from it.
  void observed(const Observation& o) { observed_.emplace(o.function, o); }
  bool has_observed(const std::string& function) const { return observed_.count(function) > 0; }
  /// The library's own custom-op seam on frame `f`'s function, made real (run_seam.cpp).
  std::optional<Candidate> seam(const PlacedFrame& f, FrameNote& note);
  /// The library's own pure-Python definition of the C function break `b` stops at, given
  /// to dynamo in its place (run_substitute.cpp).
  std::optional<Candidate> substitute(const ExplainedBreak& b);
  /// The parsed file of frame `f`, read once (nullptr, `why` set, when it cannot be).
  const python::SourceFacts* source_of(const PlacedFrame& f, std::string& why);

 private:
  struct Judged {
    std::optional<Candidate> constant, custom_op;
  };
  Judged judge(const ExplainedBreak& b, int k, FrameNote& note);
  std::optional<Candidate> custom_op(const PlacedFrame& f, const python::FunctionFacts& facts, FrameNote& note);
  std::vector<PlacedFrame> decorated(const ExplainedBreak& b, int k);
  const python::ModuleSeams* seams_of(const std::string& site_dir, const std::string& module);
  const python::SeamFactory* factory(const std::string& site_dir, const std::string& module,
                                     const python::ModuleSeams& here, const std::string& callee, std::string& where);
  Session& s_;
  std::unique_ptr<Sources> sources_;
  GuardGate gate_{s_};
  std::map<std::string, std::string> non_tensor_args_;  // of the frame being judged: parameter -> argument
  std::map<std::string, Observation> observed_;          // by module:qualified
  std::map<std::string, std::unique_ptr<python::ModuleSeams>> seams_;  // by path; nullptr: none there
};

/// Dynamo's own config knobs its hints name for a break (`capture_scalar_outputs = True`, a
/// logging function added to `ignore_logging_functions`), as candidates: lines of the user's code.
std::vector<Candidate> config_knobs(const ExplainedBreak& b);

/// A custom-op candidate whose run failed because the function returns a tuple of
/// tensors, given a fake with that many outputs; nullopt for any other failure.
std::optional<Candidate> refine_custom_op(const Candidate& tried, const std::string& failure);

/// How a run ended, read from its output: the last traceback's exception.
struct RunEnd {
  std::string type;     // "torch._dynamo.exc.Unsupported", "TypeError", "" when none
  std::string message;  // its first line
  std::string raised;   // dynamo's "raised exception X(...)" of an Observed exception, "" otherwise
};
RunEnd run_end(const std::string& log);

/// Whether `now` (a run with a candidate) is better than `before`, and why; a run that
/// failed another way than dynamo declining a construct never is.
bool improves(const RunCounts& before, const RunCounts& now, const std::vector<std::string>& gone,
              const std::vector<std::string>& new_breaks, std::string& why);

/// Evaluates each hint candidate's new body in the environment's Python (one process
/// for all); for each key, why it cannot help ("" when it gave a value or could not be
/// checked).
std::map<std::string, std::string> check_hints(Session& s, const std::vector<Candidate>& hints);

}  // namespace sitepatch::engine
