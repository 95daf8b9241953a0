#pragma once
// explain --run: the user's repro run with dynamo's graph-break log on, each break
// explained, and fixes searched narrowest first, each tried (sitepatch try's hook) and
// kept only when dynamo's own counts say it helped. Nothing is written to the environment.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/engine/explain.hpp"

namespace sitepatch::engine {

/// What the differential proof (diff_hook.py) checked in one run: the compiled
/// functions' outputs against the unpatched program's eager record and against the
/// run's own code run eagerly.
struct Checked {
  int calls = -1;      // calls whose outputs were compared; -1: no process reported
  int vs_record = 0;   // of those, against the first run's record (the unpatched program)
  int vs_eager = 0;    // of those, against the patched code run eagerly in the same process
  int recorded = 0;    // eager outputs this run recorded (the first run)
  std::string mismatch;  // the first difference, in words; "" when none
  std::vector<std::string> notes;  // what could not be checked ("the eager call 0 ... raised ValueError")
  /// How a compiled run's outputs were shown to be right, in words.
  std::string how() const;
};

/// What one run of the repro measured.
struct RunCounts {
  int status = 0;
  double seconds = 0;
  int graphs = -1;        // dynamo's unique graphs, summed over its processes; -1: none compiled
  int graph_breaks = -1;  // dynamo's graph-break count, the same way
  bool unsupported = false;      // an Unsupported error ended the run (fullgraph=True)
  std::size_t library_breaks = 0;  // breaks its log shows inside a library
  std::string failure;  // the exception that ended it when not dynamo's ("TypeError: ..."), "" otherwise
  std::string raised;   // an exception the traced code raised (dynamo's "Observed exception"), "" when none
  Checked checked;      // the differential proof's findings
  /// The run finished and dynamo raised nothing: with fullgraph=True, it compiled.
  bool compiled() const { return status == 0 && !unsupported; }
};

/// A fix the search may try.
struct Candidate {
  enum Kind { hint, assume_constant, disable, custom_op, nonstrict, config, seam, substitute } kind = disable;
  Fix fix;            // module, function, action, code, ensure_import, why, cost, dist
  std::vector<Fix> more;  // seam: the edits made with `fix` (the fake's registration, a second definition)
  bool shared = false;  // its file is in a folder the environment shares (apply needs --system)
  std::vector<std::string> inputs;  // custom_op: the tensor parameters its fake shapes outputs like
  std::string label;  // substitute: "zlib.crc32 (framecheck's pure-Python crc32)"
  std::string key() const {
    std::string k = fix.module + ":" + fix.function + " " + fix.action + " " + fix.code;
    for (auto& m : more) k += "\n" + m.module + ":" + m.function + "#" + std::to_string(m.occurrence) + " " + m.code;
    return k;
  }
  std::string describe() const;  // "assume_constant_result on pkg.mod:get_version"
};

/// Why a library frame of a run's break was or was not a candidate for
/// assume_constant_result (disable fits every frame).
struct FrameNote {
  std::string function;  // module:qualified
  std::string at;        // file:line below site-packages
  bool assume_constant = false;
  std::string why;       // "1 call in quantize_kv (kvq/__init__.py:31) passes only constants; returns json.load(...)"
  bool custom_op = false;      // a candidate for register-custom-op
  std::string custom_op_why;   // why, or why not
  std::string seam_why;        // its decorator names a custom op: whether the library's seam is a candidate
};

struct TriedRun {
  std::string what;                  // "as it is", or the candidate tried on top of the kept ones
  std::optional<Candidate> candidate;
  RunCounts counts;
  bool kept = false;
  std::string verdict;               // why kept or not
  std::vector<std::string> breaks;   // the breaks its log shows, as "operation at file:line"
  std::vector<FrameNote> frames;     // the library frames of its breaks, judged (the candidates after it)
  int batch = 0;                     // runs of one batch ran at once (--jobs)
  bool minimizing = false;           // a run without `candidate`, one of the kept fixes: is it needed
  std::string start;                 // "warm" (forked from the session's server), or "cold: why"
};

struct ProvenFixes {
  std::vector<TriedRun> runs;     // the first is the repro as it is
  std::vector<Candidate> kept;    // in the order they were kept
  Explanation last;               // what the last kept run's log explains
  std::string stop;               // why the search stopped
  bool fullgraph = false;         // the first run ended in Unsupported: fullgraph=True (or error_on_graph_break)
  std::vector<std::string> untried;  // candidates left when --max-runs stopped it
  std::vector<std::string> skipped;  // hints not run: their new body raises or gives None here
  std::vector<std::string> undone;   // fixes kept, then dropped: every candidate after them failed
  std::vector<std::string> dropped;  // kept fixes the search's end showed are not needed, and why
  /// The kinds of graph break the runs met, as newer torch names them: id ("GB0007") and page.
  std::vector<std::pair<std::string, std::string>> graph_breaks;
  /// The walks from the user's code of the first run, each chain marked by what the
  /// kept fixes leave of it: what the next restart would meet past the log.
  std::vector<UserWalk> after;
};

struct RunOptions {
  std::string command;   // run through sh -c, the environment's bin first on PATH
  int max_runs = 12;
  int jobs = 1;          // candidates run at once, each in its own overlay
  bool cold = false;     // --cold: every run its own Python, never forked from a warm one
  std::function<void(const TriedRun&)> progress;  // after each run
};

/// Why runs of `command` start cold ("" when they start warm: `python SCRIPT ARGS` or
/// `python -m MODULE ARGS` in plain words, forked from one Python that imported torch).
std::string cold_runs_because(const std::string& command, bool cold_asked);

/// Runs the search. Reads the environment and runs the command; writes nothing to it.
ProvenFixes prove_fixes(Session& s, const RunOptions& o, const audit::RuleSet& rules, const explain::HintSet& hints);

/// The candidates for the breaks of `e` that are inside a library, narrowest first: a
/// hint's traceable replacement; assume_constant_result on each library frame, innermost
/// first, where every call of it on the log's path passes constants and it returns a
/// value dynamo can hold (python/constancy); disable on each library frame, innermost
/// first (the top library frame last).
std::vector<Candidate> candidates(Session& s, const Explanation& e);

/// The config knobs among `fixes` (Candidate::config): lines for the user's own code,
/// which no recipe writes; run for a trial by the hook before torch.compile.
std::vector<std::string> config_lines(const std::vector<Candidate>& fixes);

/// A recipe of `fixes` (config knobs left out), as plan reads it, each edit commented with what it fixed.
std::string proven_recipe(const std::vector<Candidate>& fixes, const std::vector<std::string>& why,
                          const std::string& id, const std::string& requires_line);

/// dynamo's counts and the differential proof's findings from the lines try_hook.py
/// and diff_hook.py print at each process's exit.
void read_counts(const std::string& text, RunCounts& into);

}  // namespace sitepatch::engine
