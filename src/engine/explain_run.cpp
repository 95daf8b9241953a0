// explain --run: run, explain, try the narrowest candidate, keep it only if dynamo's
// counts improve; again until no break is left in library code, no candidate helps, or
// the runs are spent. Each run is the user's command under try's hook (try.cpp).
#include "sitepatch/engine/explain_run.hpp"

#include "engine/explain_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "sitepatch/audit/facts.hpp"
#include "sitepatch/engine/try.hpp"
#include "sitepatch/host/overlay.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

constexpr const char* kCountsMark = "sitepatch-dynamo-counts: ";
// How dynamo words the break a disabled function makes where it is called: a disable
// that only moves the break there did not fix it for fullgraph=True.
constexpr const char* kDisabledCall = "torch.compiler.disable";

// The breaks of a run's log, each once.
std::vector<LoggedBreak> breaks_of(const std::string& log) {
  explain::LogReading reading = explain::read_log(log);
  std::vector<LoggedBreak> out;
  for (auto& b : reading.breaks) {
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

// Whether a function can take torch.compiler.assume_constant_result: a plain function
// with no parameters, or one cached with functools.cache / lru_cache (its result is
// fixed for the process either way).
class ConstantCheck {
 public:
  explicit ConstantCheck(Session& s) : s_(s) {}

  bool fixed(const PlacedFrame& f) {
    if (f.qualified.empty() || f.site_dir.empty()) return false;
    const audit::ModuleFacts* m = facts(f);
    if (!m) return false;
    for (size_t i = 1; i < m->functions.size(); ++i) {
      const audit::Function& F = m->functions[i];
      if (F.qualified != f.qualified) continue;
      bool cached = std::any_of(F.refs.begin(), F.refs.end(), [](const audit::Ref& r) {
        return r.kind == audit::Ref::decorator &&
               (util::ends_with(r.name, "cache") || util::ends_with(r.name, "lru_cache"));
      });
      bool method = F.cls >= 0 && !F.self_name.empty();
      return cached || (!method && F.params.empty());
    }
    return false;
  }

 private:
  const audit::ModuleFacts* facts(const PlacedFrame& f) {
    std::string path = f.site_dir + "/" + f.rel;
    auto it = cache_.find(path);
    if (it != cache_.end()) return it->second ? &*it->second : nullptr;
    auto data = s_.host.read({path});
    std::optional<audit::ModuleFacts> m;
    if (data[0].exists && !data[0].is_dir)
      m = audit::extract(data[0].content, f.module, util::ends_with(f.rel, "/__init__.py"), true);
    auto& slot = cache_[path] = std::move(m);
    return slot ? &*slot : nullptr;
  }

  Session& s_;
  std::map<std::string, std::optional<audit::ModuleFacts>> cache_;
};

Candidate decorate(const site::Environment& env, const PlacedFrame& f, Candidate::Kind kind) {
  Candidate c;
  c.kind = kind;
  c.fix.module = f.module;
  c.fix.function = f.qualified;
  c.fix.action = "add-decorator";
  c.fix.code = kind == Candidate::assume_constant ? "torch.compiler.assume_constant_result" : "torch.compiler.disable";
  c.fix.ensure_import = "import torch";
  c.fix.dist = f.dist;
  c.fix.version = f.version;
  c.shared = !f.site_dir.empty() && !shared_owner(env, f.site_dir).empty();
  if (kind == Candidate::assume_constant) {
    // Next to the def: dynamo traces through functools' caches above it, not through
    // assume_constant_result above a cache.
    c.fix.position = "innermost";
    c.fix.why = "dynamo runs " + f.qualified + " once while tracing and keeps its result as a constant";
    c.fix.cost = "the result is frozen in the compiled graph: a different result later (another device, a changed "
                 "config) is not seen until a recompile";
  } else {
    c.fix.why = "keeps dynamo out of " + f.qualified + " and everything it calls";
    c.fix.cost = "dynamo breaks the graph where " + f.qualified + " is called (fullgraph=True fails there)";
  }
  return c;
}

// Whether `now` is better than `before`, and why (for the table).
bool improves(const RunCounts& before, const RunCounts& now, const std::vector<std::string>& gone,
              const std::vector<std::string>& new_breaks, std::string& why) {
  auto n = [](int v) { return v < 0 ? std::string("none") : std::to_string(v); };
  if (now.status != 0 && before.status == 0 && !before.unsupported) {
    why = "the command failed (exit " + std::to_string(now.status) + ") where it ran before";
    return false;
  }
  if (now.status != 0 && !now.unsupported) {
    // Not dynamo declining a construct: the fix broke the run (InternalTorchDynamoError,
    // an exception of the library's own).
    why = "the command failed with another error (exit " + std::to_string(now.status) + ")";
    return false;
  }
  if (now.compiled() && !before.compiled()) {
    why = "the command now runs and dynamo raises nothing (fullgraph=True compiles)";
    return true;
  }
  if (now.graph_breaks >= 0 && before.graph_breaks >= 0 && now.graph_breaks < before.graph_breaks) {
    why = "graph breaks " + n(before.graph_breaks) + " -> " + n(now.graph_breaks);
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
  why = "no better: graph breaks " + n(before.graph_breaks) + " -> " + n(now.graph_breaks) + ", graphs " +
        n(before.graphs) + " -> " + n(now.graphs);
  return false;
}

// The first run's walks from the user's code, each chain marked by the kept fixes
// alone (the log's own breaks among them: the search answered those).
std::vector<UserWalk> after_fixes(const Explanation& first, const std::vector<Candidate>& kept) {
  std::vector<Fix> fixes;
  for (auto& k : kept) fixes.push_back(k.fix);
  std::vector<UserWalk> out = first.user_walks;
  for (auto& w : out)
    for (auto& f : w.walk.chains) {
      f.by.clear();
      f.state = detail::left_by(f.chain, fixes, f.by);
    }
  return out;
}

class Search {
 public:
  Search(Session& s, const RunOptions& o, const audit::RuleSet& rules, const explain::HintSet& hints)
      : s_(s), o_(o), rules_(rules), hints_(hints) {}

  ProvenFixes run() {
    ProvenFixes out;
    Explanation current;
    TriedRun first = measure({}, nullptr, current);
    Explanation before = current;
    first.what = "as it is";
    first.verdict = "before";
    RunCounts best = first.counts;
    std::vector<std::string> best_breaks = first.breaks;
    record(out, first);
    std::set<std::string> rejected;
    while (true) {
      if (best.library_breaks == 0) {
        out.stop = "no break left inside a library";
        break;
      }
      std::vector<Candidate> cands;
      for (auto& c : candidates(s_, current))
        if (!rejected.count(c.key()) && !kept_key(out, c)) cands.push_back(c);
      if (cands.empty()) {
        out.stop = "no candidate left that helps";
        break;
      }
      if (int(out.runs.size()) >= o_.max_runs) {
        out.stop = "--max-runs " + std::to_string(o_.max_runs) + " reached";
        break;
      }
      const Candidate& c = cands.front();
      std::vector<Candidate> trial = out.kept;
      trial.push_back(c);
      Explanation next;
      TriedRun t = measure(trial, &c, next);
      t.what = "+ " + c.describe();
      std::vector<std::string> gone;
      for (auto& b : best_breaks)
        if (std::find(t.breaks.begin(), t.breaks.end(), b) == t.breaks.end()) gone.push_back(b);
      t.kept = t.verdict.empty() && improves(best, t.counts, gone, t.breaks, t.verdict);
      if (t.kept) {
        out.kept.push_back(c);
        best = t.counts;
        best_breaks = t.breaks;
        current = std::move(next);
      } else {
        rejected.insert(c.key());
      }
      record(out, t);
    }
    out.last = std::move(current);
    out.after = after_fixes(before, out.kept);
    return out;
  }

 private:
  static bool kept_key(const ProvenFixes& p, const Candidate& c) {
    return std::any_of(p.kept.begin(), p.kept.end(), [&](const Candidate& k) { return k.fix.name() == c.fix.name(); });
  }

  void record(ProvenFixes& out, TriedRun t) {
    if (o_.progress) o_.progress(t);
    out.runs.push_back(std::move(t));
  }

  // One run with `fixes` in effect; `e` gets what its log explains.
  TriedRun measure(const std::vector<Candidate>& fixes, const Candidate* tried, Explanation& e) {
    TriedRun t;
    if (tried) t.candidate = *tried;
    Plan p;
    if (!fixes.empty()) {
      std::string text = proven_recipe(fixes, {}, "explain-run-trial", "");
      p = plan(s_, {recipe::parse(text, "explain --run")});
      if (!p.ok()) {
        t.verdict = "not applicable: " + (p.problems.empty() ? std::string("an edit does not apply") : p.problems.front());
        for (auto& ed : p.edits)
          if (!ed.message.empty()) {
            t.verdict = "not applicable: " + ed.message;
            break;
          }
        return t;
      }
    }
    host::CommandRun run = try_run(p, {"sh", "-c", o_.command});
    run.capture = true;
    const char* logs = std::getenv("TORCH_LOGS");
    std::string torch_logs = logs && *logs ? std::string(logs) : "";
    if (torch_logs.find("graph_breaks") == std::string::npos)
      torch_logs += (torch_logs.empty() ? "" : ",") + std::string("graph_breaks");
    run.env["TORCH_LOGS"] = torch_logs;
    run.env["TORCHDYNAMO_VERBOSE"] = "1";
    run.env["SITEPATCH_DYNAMO_COUNTS"] = "1";
    run.env["SITEPATCH_TRY_QUIET"] = "1";
    run.env["VIRTUAL_ENV"] = s_.env.prefix;
    run.path_first_dirs["PATH"] = s_.env.prefix + "/bin";
    auto start = std::chrono::steady_clock::now();
    host::CommandResult r = s_.host.run_command(run);
    t.counts.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    t.counts.status = r.status;
    std::string log = r.err + "\n" + r.out;
    read_counts(log, t.counts);
    t.counts.unsupported = r.status != 0 && log.find("torch._dynamo.exc.Unsupported") != std::string::npos;
    auto breaks = breaks_of(log);
    if (!breaks.empty()) {
      // The log's lines are those of the planned texts: read them, not the files on disk.
      std::map<std::string, std::string> texts;
      for (const FileChange& f : p.files) texts[f.path] = f.new_text;
      auto view = host::overlay_host(s_.host, std::move(texts));
      Session seen(*view, s_.env, s_.state_dir);
      e = explain(seen, std::move(breaks), rules_, hints_);
    }
    for (auto& b : e.breaks) {
      t.counts.library_breaks += b.in_library();
      t.breaks.push_back(break_text(b));
    }
    spdlog::info("explain --run: exit {}, {:.1f} s, graphs {}, graph breaks {}, {} in libraries", r.status,
                 t.counts.seconds, t.counts.graphs, t.counts.graph_breaks, t.counts.library_breaks);
    return t;
  }

  Session& s_;
  const RunOptions& o_;
  const audit::RuleSet& rules_;
  const explain::HintSet& hints_;
};

}  // namespace

std::string Candidate::describe() const {
  switch (kind) {
    case hint: return "hint " + fix.hint + " (a traceable body) for " + fix.name();
    case assume_constant: return "assume_constant_result on " + fix.name();
    case disable: return "disable on " + fix.name();
  }
  return fix.name();
}

void read_counts(const std::string& text, RunCounts& into) {
  std::string mark = kCountsMark;
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) {
    size_t end = text.find('\n', at);
    auto j = nlohmann::json::parse(text.substr(at + mark.size(), end - at - mark.size()), nullptr, false);
    if (j.is_discarded() || !j.contains("graphs")) continue;
    into.graphs = std::max(into.graphs, 0) + j["graphs"].get<int>();
    into.graph_breaks = std::max(into.graph_breaks, 0) + j["graph_breaks"].get<int>();
  }
}

std::vector<Candidate> candidates(Session& s, const Explanation& e) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  auto add = [&](Candidate c) {
    if (seen.insert(c.key()).second) out.push_back(std::move(c));
  };
  ConstantCheck constant(s);
  for (const ExplainedBreak& b : e.breaks) {
    if (!b.in_library() || b.stale()) continue;
    if (b.fix && !e.fixes[*b.fix].hint.empty()) {
      Candidate c;
      c.kind = Candidate::hint;
      c.fix = e.fixes[*b.fix];
      add(c);
    }
    // Library frames, innermost first.
    std::vector<const PlacedFrame*> frames;
    for (int k = b.last; k >= b.entry && k >= 0; --k) {
      const PlacedFrame& f = b.frames[size_t(k)];
      if (f.kind == explain::FrameKind::library && f.mapped && !f.qualified.empty()) frames.push_back(&f);
    }
    for (const PlacedFrame* f : frames)
      if (constant.fixed(*f)) add(decorate(s.env, *f, Candidate::assume_constant));
    for (const PlacedFrame* f : frames) add(decorate(s.env, *f, Candidate::disable));
  }
  // A fix in a folder the environment shares (a .pth folder, the system's) needs
  // apply --system and reaches every environment that shares it: tried last.
  std::stable_partition(out.begin(), out.end(), [&](const Candidate& c) { return !c.shared; });
  return out;
}

std::string proven_recipe(const std::vector<Candidate>& fixes, const std::vector<std::string>& why,
                          const std::string& id, const std::string& requires_line) {
  std::string out = "id: " + id + "\n";
  if (!requires_line.empty()) out += "requires: " + requires_line + "\n";
  out += "edits:\n";
  for (size_t i = 0; i < fixes.size(); ++i) {
    if (i < why.size() && !why[i].empty()) out += "  # " + why[i] + "\n";
    out += edit_yaml(fixes[i].fix);
  }
  return out;
}

ProvenFixes prove_fixes(Session& s, const RunOptions& o, const audit::RuleSet& rules, const explain::HintSet& hints) {
  if (o.command.empty()) throw Error("explain --run needs a command", Exit::usage);
  if (o.max_runs < 1) throw Error("--max-runs must be at least 1", Exit::usage);
  return Search(s, o, rules, hints).run();
}

}  // namespace sitepatch::engine
