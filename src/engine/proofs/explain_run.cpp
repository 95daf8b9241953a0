// explain --run: run, explain, try the narrowest candidate, keep it only if dynamo's
// counts improve; again until no break is left in library code, no candidate helps, or
// the runs are spent. Each run is the user's command under try's hook (try.cpp).
#include "sitepatch/engine/explain_run.hpp"

#include "engine/explain/explain_impl.hpp"
#include "engine/proofs/run_impl.hpp"
#include "engine/proofs/warm_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/audit/flow.hpp"
#include "sitepatch/engine/try.hpp"
#include "sitepatch/host/overlay.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {


// A frame of sitepatch's own hook (the differential proof's wrapper around a compiled
// function), from the run's private folder: neither the user's code nor a library's.
bool hook_frame(const explain::Frame& f) {
  return f.file.find("/sitepatch-run-") != std::string::npos &&
         (util::ends_with(f.file, "/sitepatch_diff.py") || util::ends_with(f.file, "/sitepatch_observe.py") ||
          util::ends_with(f.file, "/sitecustomize.py"));
}

// The breaks of a run's log, each once, without the hook's frames.
std::vector<LoggedBreak> breaks_of(const std::string& log) {
  explain::LogReading reading = explain::read_log(log);
  std::vector<LoggedBreak> out;
  for (auto& b : reading.breaks) {
    b.frames.erase(std::remove_if(b.frames.begin(), b.frames.end(), hook_frame), b.frames.end());
    auto same = std::find_if(out.begin(), out.end(), [&](const LoggedBreak& o) { return explain::same_break(o.brk, b); });
    if (same != out.end()) same->brk.repeats += b.repeats + 1;
    else out.push_back({std::move(b), "run"});
  }
  return out;
}

std::string break_text(const ExplainedBreak& b) {
  const auto& brk = b.logged.brk;
  std::string what = brk.operation.empty() ? brk.reason : brk.operation;
  if (b.last >= 0) {
    const PlacedFrame& f = b.frames[size_t(b.last)];
    what += " at " + f.rel + ":" + std::to_string(f.frame.line);
  }
  return what;
}

// A break as the same break after a fix moved its lines: the operation and the
// function it is in (a decorator added above shifts every line below it).
std::string break_key(const ExplainedBreak& b) {
  const auto& brk = b.logged.brk;
  std::string key = brk.operation.empty() ? brk.reason : brk.operation;
  if (b.last >= 0) return key + " in " + b.frames[size_t(b.last)].name();
  if (!b.frames.empty()) key += " in " + b.frames.back().frame.file + ":" + b.frames.back().frame.function;
  return key;
}

// The first run's walks from the user's code, each chain marked by the kept fixes
// alone (the log's own breaks among them: the search answered those).
// A run that compiled under fullgraph=True met no break at all (`compiled`): a chain
// no fix answers is one dynamo traced or never reached, nothing a restart would meet.
std::vector<UserWalk> after_fixes(const Explanation& first, const std::vector<Candidate>& kept, bool compiled) {
  std::vector<Fix> fixes;
  for (auto& k : kept) fixes.push_back(k.fix);
  std::vector<UserWalk> out = first.user_walks;
  for (auto& w : out) {
    for (auto& f : w.walk.chains) {
      f.by.clear();
      f.state = detail::left_by(f.chain, fixes, f.by, &f.by_code);
    }
    if (compiled)
      w.walk.chains.erase(std::remove_if(w.walk.chains.begin(), w.walk.chains.end(),
                                         [](const FollowUp& f) { return f.state == FollowUp::remains; }),
                          w.walk.chains.end());
  }
  return out;
}

// A private folder on the host for the session's runs (the differential proof's record
// of the unpatched program's outputs), removed when the search ends.
class ScratchDir {
 public:
  explicit ScratchDir(host::Host& h) : h_(h) {
    host::CommandRun make;
    make.argv = {"sh", "-c", "umask 077 && mktemp -d \"${TMPDIR:-/tmp}/sitepatch-explain.XXXXXXXX\""};
    make.capture = true;
    host::CommandResult r = h_.run_command(make);
    path_ = util::trim(r.out);
    if (r.status != 0 || path_.empty() || path_[0] != '/' || path_.find('\n') != std::string::npos)
      throw Error("explain --run: cannot make a private folder for its runs on " + h_.name() + ": " +
                  util::printable(util::trim(r.err)));
  }
  ~ScratchDir() {
    try {
      host::CommandRun rm;
      rm.argv = {"rm", "-rf", "--", path_};
      rm.capture = true;
      h_.run_command(rm);
    } catch (...) {
      // The folder is private and in the temp folder: left behind, it harms nothing.
    }
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  host::Host& h_;
  std::string path_;
};

// A point of the search: the fixes kept, and what the best run with them measured.
struct State {
  std::vector<Candidate> kept;
  RunCounts best;
  std::vector<std::string> breaks;
  std::vector<std::string> keys;  // break_key of each of `breaks`
  Explanation current;
  std::map<std::string, std::string> texts;  // the files as `current`'s run read them (the planned texts)
  size_t run = 0;  // the run that measured it (its frames are judged there)
  std::string signature() const {
    std::string out;
    for (auto& k : kept) out += k.key() + ";";
    return out;
  }
};

// One run to make: the fixes in effect, the candidate it tries, what came of it.
struct Trial {
  std::vector<Candidate> fixes;
  std::optional<Candidate> tried;
  Plan plan;
  std::optional<host::CommandRun> run;
  TriedRun t;
  std::vector<std::string> keys;  // break_key of each of t.breaks
  Explanation e;
  std::map<std::string, std::string> texts;  // the planned texts its run read
  bool improved = false;
};

class Search {
 public:
  Search(Session& s, const RunOptions& o, const audit::RuleSet& rules, const explain::HintSet& hints)
      : s_(s), o_(o), rules_(rules), hints_(hints), finder_(s), scratch_(s.host),
        warm_(s.host, s.env, o.command, o.cold) {
    // Every run's explanation walks from the library frames of its breaks: the same
    // modules each time, most of them unpatched (torch's, once a fix imports torch).
    audit::flow::keep_lowered(true);
  }

  ProvenFixes run() {
    std::vector<Trial> first(1);
    measure(first);
    first[0].t.what = "as it is";
    first[0].t.verdict = "before";
    // Unsupported reached the top: fullgraph=True (or error_on_graph_break), where a
    // disabled function's call is a break of its own: no disable can help.
    fullgraph_ = first[0].t.counts.unsupported;
    if (fullgraph_)
      out_.skipped.push_back("disable on any frame: under fullgraph=True the call of a disabled function is itself a "
                             "break");
    State st;
    st.best = first[0].t.counts;
    st.breaks = first[0].t.breaks;
    st.keys = first[0].keys;
    st.current = first[0].e;
    st.texts = first[0].texts;
    Explanation before = st.current;
    record(first[0].t);
    std::vector<State> trail;  // the state before each kept fix: where an undo goes back to
    while (true) {
      if (st.best.library_breaks == 0) {
        out_.stop = "no break left inside a library";
        break;
      }
      std::vector<Candidate> pool = open_candidates(st);
      observe_ = unobserved_ops(pool);
      if (pool.empty()) {
        if (!trail.empty() && undo(st, trail)) continue;
        out_.stop = "no candidate left that helps";
        break;
      }
      int left = o_.max_runs - int(out_.runs.size());
      if (left <= 0) {
        out_.stop = "--max-runs " + std::to_string(o_.max_runs) + " reached";
        for (auto& c : pool) out_.untried.push_back(c.describe());
        break;
      }
      size_t n = std::min(pool.size(), size_t(std::max(1, std::min(o_.jobs, left))));
      std::vector<Trial> batch(n);
      for (size_t i = 0; i < n; ++i) {
        batch[i].fixes = st.kept;
        batch[i].fixes.push_back(pool[i]);
        batch[i].tried = pool[i];
      }
      measure(batch);
      judge(st, batch);
      // The narrowest that helped: the first in the order they were found.
      auto kept = std::find_if(batch.begin(), batch.end(), [](const Trial& t) { return t.improved; });
      for (auto& tr : batch) {
        if (kept != batch.end() && &tr != &*kept && tr.improved)
          tr.t.verdict = "helped too (" + tr.t.verdict + "), but " + kept->tried->describe() + " is narrower";
        tr.t.kept = kept != batch.end() && &tr == &*kept;
        // One that helped but lost to a narrower one stays open here: when the narrower
        // fix is undone, it is the next to try (on FlashInfer's rmsnorm, the library's
        // custom-op seam compiled the whole op with fullgraph=True, lost to a narrower
        // assume_constant_result, which every later candidate then failed after).
        if (!tr.t.kept && !tr.improved) reject(st, *tr.tried, tr.t.verdict);
        else if (!tr.t.kept) tried_.insert(st.signature());
        // What the failure taught: the fake's outputs as the function really returns them.
        if (auto better = refine_custom_op(*tr.tried, tr.t.counts.failure); better && kept == batch.end())
          refined_[st.signature()].push_back(*better);
        tr.t.batch = int(n);
        record(tr.t);
      }
      if (kept != batch.end()) {
        trail.push_back(st);
        st.kept.push_back(*kept->tried);
        st.best = kept->t.counts;
        st.breaks = kept->t.breaks;
        st.keys = kept->keys;
        st.current = std::move(kept->e);
        st.texts = kept->texts;
        st.run = out_.runs.size() - n + size_t(kept - batch.begin());
      }
    }
    observe_.clear();
    if (st.kept.size() > 1 && (!fullgraph_ || st.best.compiled())) minimize(st);
    out_.fullgraph = fullgraph_;
    out_.kept = st.kept;
    out_.last = std::move(st.current);
    if (!out_.last.user_code_walked &&
        std::any_of(out_.last.breaks.begin(), out_.last.breaks.end(), [](auto& b) { return b.in_library(); })) {
      // Only what is left is printed with the walks from the user's code: made once, here.
      auto view = host::overlay_host(s_.host, st.texts);
      Session seen(*view, s_.env, s_.state_dir);
      walk_from_user_code(seen, rules_, out_.last);
    }
    out_.after = after_fixes(before, out_.kept, fullgraph_ && st.best.compiled());
    return std::move(out_);
  }

 private:
  // Every candidate after the last kept fix ran and failed: that fix may be what blocks
  // them (it changed the path dynamo takes). Back to before it, without it, when
  // something else is left to try there; else the fixes kept so far stand.
  bool undo(State& st, std::vector<State>& trail) {
    // Only candidates that ran and failed are evidence that the fix blocks them; a break
    // with no candidate at all is no reason to give up what got past the one before.
    if (!tried_.count(st.signature())) return false;
    const Candidate& last = st.kept.back();
    std::string key = trail.back().signature() + "|" + last.key();
    rejected_.insert(key);
    if (open_candidates(trail.back()).empty()) {
      rejected_.erase(key);
      return false;
    }
    out_.undone.push_back(last.describe() + ": every candidate after it failed; searching without it");
    st = std::move(trail.back());
    trail.pop_back();
    return true;
  }

  // Drops each kept fix whose run without it does as well (delta debugging, one fix at a
  // time): a later fix may have made an earlier one unnecessary. The last kept fix is
  // needed: the run without it is the one it improved on. Runs of one batch are
  // independent, the natural work for --jobs; after a drop, the others are run again.
  void minimize(State& st) {
    std::vector<std::string> open;
    for (size_t i = 0; i + 1 < st.kept.size(); ++i) open.push_back(st.kept[i].key());
    while (!open.empty()) {
      int left = o_.max_runs - int(out_.runs.size());
      if (left <= 0) {
        out_.stop += "; --max-runs " + std::to_string(o_.max_runs) + " left " + std::to_string(open.size()) +
                     (open.size() == 1 ? " fix" : " fixes") + " unchecked for need";
        return;
      }
      size_t n = std::min(open.size(), size_t(std::max(1, std::min(o_.jobs, left))));
      std::vector<Trial> batch(n);
      for (size_t i = 0; i < n; ++i) {
        for (auto& k : st.kept)
          if (k.key() == open[i]) batch[i].tried = k;
          else batch[i].fixes.push_back(k);
      }
      measure(batch);
      auto dropped = batch.end();
      for (auto it = batch.begin(); it != batch.end(); ++it) {
        TriedRun& t = it->t;
        t.what = "- " + it->tried->describe();
        t.minimizing = true;
        t.batch = int(n);
        if (t.verdict.empty()) {
          bool same = as_good(st.best, t.counts, t.verdict);
          if (same && dropped == batch.end()) dropped = it;
        }
      }
      for (auto it = batch.begin(); it != batch.end(); ++it) {
        bool passed = it->t.verdict.rfind("not needed", 0) == 0;
        if (it == dropped) {
          out_.dropped.push_back(it->tried->describe() + ": " + it->t.verdict);
          st.kept.erase(std::find_if(st.kept.begin(), st.kept.end(), [&](const Candidate& k) { return k.key() == it->tried->key(); }));
          st.best = it->t.counts;
          st.breaks = it->t.breaks;
          st.keys = it->keys;
          st.current = it->e;
          st.texts = it->texts;
        } else if (passed) {
          it->t.verdict += ", but " + dropped->tried->describe() + " was dropped first: run again without it";
          record(it->t);
          continue;  // stays open: its run had the other fix in
        }
        open.erase(std::find(open.begin(), open.end(), it->tried->key()));
        record(it->t);
      }
    }
  }

  // The custom-op candidates whose functions no run has watched yet: the next batch
  // watches them (observe_hook.py), so that their fakes say what the real function does.
  std::string unobserved_ops(const std::vector<Candidate>& pool) const {
    std::vector<std::string> names;
    for (auto& c : pool) {
      std::string name = c.fix.module + ":" + c.fix.function;
      if (c.kind == Candidate::custom_op && !finder_.has_observed(name) &&
          std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
    }
    return util::join(names, ",");
  }

  // Whether a run without one of the kept fixes does as well as the run with them all.
  static bool as_good(const RunCounts& best, const RunCounts& now, std::string& why) {
    std::string lost;
    if (!now.checked.mismatch.empty()) lost = "compiled differs from eager: " + now.checked.mismatch;
    else if (best.compiled() && !now.compiled())
      lost = now.unsupported ? "dynamo stops again (fullgraph=True fails)"
                             : "the run fails (exit " + std::to_string(now.status) + ")" +
                                   (now.failure.empty() ? "" : ": " + now.failure);
    else if (now.status != 0 && best.status == 0) lost = "the run fails (exit " + std::to_string(now.status) + ")";
    else if (best.graph_breaks >= 0 && now.graph_breaks > best.graph_breaks)
      lost = "graph breaks " + std::to_string(best.graph_breaks) + " -> " + std::to_string(now.graph_breaks);
    else if (now.library_breaks > best.library_breaks)
      lost = "breaks inside libraries " + std::to_string(best.library_breaks) + " -> " + std::to_string(now.library_breaks);
    if (!lost.empty()) {
      why = "needed: without it " + lost;
      return false;
    }
    why = std::string("not needed: without it the run does as well") +
          (now.compiled() ? " (" + now.checked.how() + ")" : "");
    return true;
  }

  // The candidates of the state's breaks not yet tried there; each library frame's
  // verdict goes on the run that measured the state.
  std::vector<Candidate> open_candidates(const State& st) {
    std::vector<FrameNote> notes;
    std::vector<Candidate> all = finder_.find(st.current, &notes);
    if (out_.runs[st.run].frames.empty()) out_.runs[st.run].frames = std::move(notes);
    std::vector<Candidate> unchecked;
    for (auto& c : all)
      if (c.kind == Candidate::hint && !hint_checked_.count(c.key())) unchecked.push_back(c);
    if (!unchecked.empty()) {
      for (auto& [key, why] : check_hints(s_, unchecked))
        if (!why.empty()) hint_skips_[key] = why;
      for (auto& c : unchecked) {
        hint_checked_.insert(c.key());
        if (hint_skips_.count(c.key())) out_.skipped.push_back(c.describe() + ": " + hint_skips_[c.key()]);
      }
    }
    if (auto r = refined_.find(st.signature()); r != refined_.end()) all.insert(all.begin(), r->second.begin(), r->second.end());
    std::vector<Candidate> open;
    for (auto& c : all) {
      bool kept = std::any_of(st.kept.begin(), st.kept.end(), [&](const Candidate& k) { return k.fix.name() == c.fix.name(); });
      if (kept || (fullgraph_ && c.kind == Candidate::disable) || hint_skips_.count(c.key()) || never_.count(c.key()) || rejected_.count(st.signature() + "|" + c.key()))
        continue;
      open.push_back(c);
    }
    return open;
  }

  void reject(const State& st, const Candidate& c, const std::string& verdict) {
    rejected_.insert(st.signature() + "|" + c.key());
    tried_.insert(st.signature());
    // A disable that moves the break to its caller does so whatever else is kept.
    if (verdict.find("only moved to where the disabled function is called") != std::string::npos)
      never_.insert(c.key());
  }

  void judge(const State& st, std::vector<Trial>& batch) {
    for (auto& tr : batch) {
      tr.t.what = "+ " + tr.tried->describe();
      if (!tr.t.verdict.empty()) continue;  // not applicable: said when planned
      std::vector<std::string> gone;
      for (size_t i = 0; i < st.breaks.size() && i < st.keys.size(); ++i)
        if (std::find(tr.keys.begin(), tr.keys.end(), st.keys[i]) == tr.keys.end()) gone.push_back(st.breaks[i]);
      tr.improved = improves(st.best, tr.t.counts, gone, tr.t.breaks, tr.t.verdict);
    }
  }

  void record(TriedRun t) {
    out_.runs.push_back(std::move(t));
    if (o_.progress) o_.progress(out_.runs.back());
  }

  // Plans a trial's fixes; a plan that fails is the trial's verdict, with no run.
  void prepare(Trial& tr) {
    if (tr.tried) tr.t.candidate = *tr.tried;
    bool edits = std::any_of(tr.fixes.begin(), tr.fixes.end(), [](const Candidate& c) { return c.kind != Candidate::config; });
    if (edits) {
      std::string text = proven_recipe(tr.fixes, {}, "explain-run-trial", "");
      tr.plan = plan(s_, {recipe::parse(text, "explain --run")});
      if (!tr.plan.ok()) {
        tr.t.verdict =
            "not applicable: " + (tr.plan.problems.empty() ? std::string("an edit does not apply") : tr.plan.problems.front());
        for (auto& ed : tr.plan.edits)
          if (!ed.message.empty()) {
            tr.t.verdict = "not applicable: " + ed.message;
            break;
          }
        return;
      }
    }
    if (tr.tried) spdlog::debug("explain --run: trying {}: {}", tr.tried->describe(), tr.tried->fix.code);
    host::CommandRun run = try_run(tr.plan, {"sh", "-c", o_.command});
    run.capture = true;
    const char* logs = std::getenv("TORCH_LOGS");
    std::string torch_logs = logs && *logs ? std::string(logs) : "";
    if (torch_logs.find("graph_breaks") == std::string::npos)
      torch_logs += (torch_logs.empty() ? "" : ",") + std::string("graph_breaks");
    run.env["TORCH_LOGS"] = torch_logs;
    run.env["TORCHDYNAMO_VERBOSE"] = "1";
    run.env["SITEPATCH_DYNAMO_COUNTS"] = "1";
    run.env["SITEPATCH_TRY_QUIET"] = "1";
    // The first run (no fix) records the unpatched program's eager outputs; every
    // other run's compiled outputs are compared with them.
    run.env["SITEPATCH_DIFF"] = scratch_.path();
    run.env["SITEPATCH_DIFF_MODE"] = tr.fixes.empty() && !tr.tried ? "record" : "compare";
    if (!observe_.empty()) run.env["SITEPATCH_OBSERVE"] = observe_;
    // Config knobs are lines of the user's code: the hook runs them before torch.compile.
    if (auto lines = config_lines(tr.fixes); !lines.empty()) run.env["SITEPATCH_DYNAMO_CONFIG"] = util::join(lines, "\n");
    run.env["VIRTUAL_ENV"] = s_.env.prefix;
    run.path_first_dirs["PATH"] = s_.env.prefix + "/bin";
    warm_.warm(run);
    tr.run = std::move(run);
  }

  // What a run's output says: dynamo's counts, how it ended, its breaks explained
  // against the texts it ran.
  void finish(Trial& tr, const host::CommandResult& r) {
    RunCounts& c = tr.t.counts;
    c.seconds = r.seconds;
    c.status = r.status;
    std::string err = r.err;
    tr.t.start = warm_.cold().empty() ? detail::take_start_line(err) : "cold: " + warm_.cold();
    std::string log = err + "\n" + r.out;
    read_counts(log, c);
    for (const Observation& o : read_observations(log)) finder_.observed(o);
    RunEnd end = r.status != 0 ? run_end(log) : RunEnd{};
    c.unsupported = r.status != 0 && util::ends_with(end.type, "Unsupported");
    if (r.status != 0 && !c.unsupported)
      c.failure = end.type.empty() ? "" : util::printable(end.type + (end.message.empty() ? "" : ": " + end.message));
    c.raised = c.unsupported ? util::printable(end.raised) : "";
    auto breaks = breaks_of(log);
    if (!breaks.empty()) {
      // The log's lines are those of the planned texts: read them, not the files on disk.
      for (const FileChange& f : tr.plan.files) tr.texts[f.path] = f.new_text;
      auto view = host::overlay_host(s_.host, tr.texts);
      Session seen(*view, s_.env, s_.state_dir);
      // The walks from the user's code are the first run's (the report's "after the
      // fixes" marks them): each later run would walk them again, seconds each.
      tr.e = explain(seen, std::move(breaks), rules_, hints_, /*user_code=*/!walked_user_code_);
      walked_user_code_ = true;
    }
    for (auto& b : tr.e.breaks) {
      c.library_breaks += b.in_library();
      tr.t.breaks.push_back(break_text(b));
      tr.keys.push_back(break_key(b));
      const auto& brk = b.logged.brk;
      std::pair<std::string, std::string> gb{brk.graph_break_id, brk.graph_break_url};
      if (!gb.first.empty() && std::find(out_.graph_breaks.begin(), out_.graph_breaks.end(), gb) == out_.graph_breaks.end())
        out_.graph_breaks.push_back(std::move(gb));
    }
    spdlog::info("explain --run: exit {}, {:.1f} s, graphs {}, graph breaks {}, {} in libraries", r.status, c.seconds,
                 c.graphs, c.graph_breaks, c.library_breaks);
  }

  // Every trial of a batch at once (--jobs), each under its own try hook.
  void measure(std::vector<Trial>& trials) {
    std::vector<host::CommandRun> runs;
    std::vector<size_t> which;
    for (size_t i = 0; i < trials.size(); ++i) {
      prepare(trials[i]);
      if (trials[i].run) {
        runs.push_back(*trials[i].run);
        which.push_back(i);
      }
    }
    std::vector<host::CommandResult> results = s_.host.run_commands(runs, o_.jobs);
    for (size_t k = 0; k < which.size(); ++k) finish(trials[which[k]], results[k]);
  }

  Session& s_;
  const RunOptions& o_;
  const audit::RuleSet& rules_;
  const explain::HintSet& hints_;
  CandidateFinder finder_;
  ScratchDir scratch_;
  std::string observe_;  // functions the next runs watch (SITEPATCH_OBSERVE)
  detail::WarmRuns warm_;  // its server stopped when the search ends
  ProvenFixes out_;
  std::set<std::string> rejected_;       // "state signature|candidate key"
  std::set<std::string> never_;          // candidate keys no state can make help
  std::set<std::string> hint_checked_;
  std::map<std::string, std::string> hint_skips_;
  bool fullgraph_ = false;
  bool walked_user_code_ = false;  // the first run's explanation has the walks from the user's code
  std::set<std::string> tried_;          // state signatures where a candidate ran and failed
  std::map<std::string, std::vector<Candidate>> refined_;  // by state signature: candidates a failure taught
};
}  // namespace

std::string Candidate::describe() const {
  switch (kind) {
    case hint: return "hint " + fix.hint + " (a traceable body) for " + fix.name();
    case assume_constant: return "assume_constant_result on " + fix.name();
    case disable: return "disable on " + fix.name();
    case custom_op: return "register-custom-op on " + fix.name();
    case nonstrict: return "nonstrict_trace on " + fix.name();
    case config: return "dynamo config `" + fix.code + "` (a line in your code, not a recipe edit)";
    case seam: return "custom-op seam " + fix.name() + " made real";
    case substitute: return "substitute_in_graph for " + label;
  }
  return fix.name();
}

std::vector<std::string> config_lines(const std::vector<Candidate>& fixes) {
  std::vector<std::string> out;
  for (auto& c : fixes)
    if (c.kind == Candidate::config) out.push_back(c.fix.code);
  return out;
}

std::string proven_recipe(const std::vector<Candidate>& fixes, const std::vector<std::string>& why,
                          const std::string& id, const std::string& requires_line) {
  // Through the recipe writer's quoting, and read back before anyone writes it: names and
  // verdicts come from files and logs others may write.
  std::string out = "id: " + recipe::yaml_scalar(id) + "\n";
  if (!requires_line.empty()) out += "requires: " + recipe::yaml_scalar(requires_line) + "\n";
  out += "edits:\n";
  std::vector<recipe::Edit> edits;
  for (size_t i = 0; i < fixes.size(); ++i) {
    if (fixes[i].kind == Candidate::config) continue;
    if (i < why.size() && !why[i].empty()) {
      std::string line = why[i];
      std::replace(line.begin(), line.end(), '\n', ' ');
      out += "  # " + recipe::yaml_comment(line) + "\n";
    }
    edits.push_back(fix_edit(fixes[i].fix));
    out += recipe::edit_yaml(edits.back());
    for (const Fix& m : fixes[i].more) {
      edits.push_back(fix_edit(m));
      out += recipe::edit_yaml(edits.back());
    }
  }
  recipe::check_written(out, id, edits, "the recipe explain --run proves");
  return out;
}

std::string cold_runs_because(const std::string& command, bool cold_asked) {
  return cold_asked ? "--cold" : detail::cold_because(command);
}

ProvenFixes prove_fixes(Session& s, const RunOptions& o, const audit::RuleSet& rules, const explain::HintSet& hints) {
  if (o.command.empty()) throw Error("explain --run needs a command", Exit::usage);
  if (o.max_runs < 1) throw Error("--max-runs must be at least 1", Exit::usage);
  if (o.jobs < 1) throw Error("--jobs must be at least 1", Exit::usage);
  return Search(s, o, rules, hints).run();
}

}  // namespace sitepatch::engine
