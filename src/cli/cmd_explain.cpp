// sitepatch explain LOG...: from dynamo's log to a recipe. Every Unsupported error and
// graph break the logs hold, each library frame placed in the environment, a fix per
// break, and what the fixes leave (the next break after the restart).
#include <algorithm>
#include <thread>
#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "commands.hpp"
#include "explain_report.hpp"
#include "output_file.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

struct ExplainOptions {
  std::vector<std::string> logs;
  bool list_hints = false;           // --list-hints: the hints, no log
  std::string recipe;                // --recipe FILE ("-": stdout)
  std::vector<std::string> hints;    // --hints FILE...
  std::vector<std::string> rules;    // --rules FILE...
  std::string run;                   // --run CMD: run the repro and prove the fixes
  int max_runs = 12;
  int jobs = -1;                     // --jobs N; -1: half the cores, at least 1
  bool oversubscribe = false;        // --oversubscribe: --jobs N at once even where the cores are not spare
  bool cold = false;                 // --cold: each run its own Python (no warm server)
};

// Half the cores of the machine the runs happen on (the host's over --host).
int default_jobs(const site::Environment& env) {
  int cores = env.cpus > 0 ? env.cpus : int(std::thread::hardware_concurrency());
  return std::max(1, cores / 2);
}

explain::HintSet load_hints(const std::vector<std::string>& files) {
  explain::HintSet hints;
  hints.add(explain::builtin_hints());
  for (auto& path : files) {
    check_code_file(path, "hints", "explain --run runs a hint's body");
    auto text = util::read_named_file(path);
    if (!text) throw Error("cannot read hints file " + text.error(), Exit::usage);
    hints.add(explain::parse_hints(*text, path));
  }
  return hints;
}

// The hints explain uses, as `sitepatch rules` lists audit's rules.
int list_hints(const Output& o, const explain::HintSet& hints) {
  if (o.json()) {
    nlohmann::json arr = nlohmann::json::array();
    for (auto& h : hints.all())
      arr.push_back({{"id", h.id}, {"operation", or_null(h.operation)}, {"means", or_null(h.means)},
                     {"calls", or_null(h.calls)}, {"holds", h.holds}, {"replace_body", or_null(h.replace_body)},
                     {"ensure_import", or_null(h.ensure_import)}, {"why", or_null(h.why)}, {"origin", h.origin},
                     {"line", h.line}});
    o.document({{"ok", true}, {"hints", arr}});
    return int(Exit::ok);
  }
  auto match = [](const explain::Hint& h) {
    return h.calls.empty() ? h.operation : h.calls + " [" + util::join(h.holds, ", ") + "]";
  };
  size_t wi = 2, wm = 5;
  for (auto& h : hints.all()) {
    wi = std::max(wi, h.id.size());
    wm = std::max(wm, match(h).size());
  }
  o.out(o.paint(fmt::format("{:<{}}  {:<5}  {:<{}}  {}", "ID", wi, "KIND", "MATCH", wm, "FROM"), Paint::header));
  for (auto& h : hints.all())
    o.out(fmt::format("{:<{}}  {:<5}  {:<{}}  {}:{}", h.id, wi, h.calls.empty() ? "means" : "fix", match(h), wm,
                      h.origin, h.line));
  return int(Exit::ok);
}

// What a damaged log lacks, one line per break or stray line, in the log's order.
std::vector<std::string> damage_lines(const explain::LogReading& r) {
  std::vector<std::pair<int, std::string>> all;
  for (auto& d : r.damage)
    all.push_back({d.log_line, (d.last_line > d.log_line ? "lines " + std::to_string(d.log_line) + "-" +
                                                               std::to_string(d.last_line)
                                                         : "line " + std::to_string(d.log_line)) +
                                   ": " + d.what});
  for (auto& b : r.breaks)
    for (auto& d : b.damage)
      all.push_back({b.log_line, "line " + std::to_string(b.log_line) + ", the break \"" +
                                     util::printable(b.reason.empty() ? std::string("?") : b.reason) + "\": " + d});
  std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [_, l] : all) out.push_back(l);
  return out;
}

// A cut or damaged log read as it stands would give a wrong answer that looks right (no
// break in a library; a break without a reason): refused, with all that is missing.
void refuse_damaged(const std::string& path, const explain::LogReading& r) {
  auto lines = damage_lines(r);
  if (lines.empty()) return;
  std::string m = "the log " + (path == "-" ? std::string("on standard input") : util::printable(path)) +
                  " is incomplete or damaged, so its breaks cannot be read whole:";
  constexpr size_t kShown = 12;  // the first ones say where to look; the rest is a count
  for (size_t k = 0; k < lines.size() && k < kShown; ++k) m += "\n  " + lines[k];
  if (lines.size() > kShown) m += "\n  and " + std::to_string(lines.size() - kShown) + " more";
  m += "\ncapture the whole output again (for example TORCH_LOGS=graph_breaks python model.py 2> log.txt) and explain "
       "that";
  throw Error(m, Exit::usage);
}

// Every break of every log; one seen in two logs is one break seen twice.
std::vector<engine::LoggedBreak> read_logs(const std::vector<std::string>& logs) {
  std::vector<engine::LoggedBreak> out;
  for (auto& path : logs) {
    std::string text;
    if (path == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      auto t = util::read_named_file(path);
      if (!t) throw Error("cannot read log " + util::printable(t.error()), Exit::usage);
      text = std::move(*t);
    }
    explain::LogReading reading = explain::read_log(text);
    refuse_damaged(path, reading);
    for (auto& b : reading.breaks) {
      auto same = std::find_if(out.begin(), out.end(), [&](const engine::LoggedBreak& o) { return explain::same_break(o.brk, b); });
      if (same != out.end()) same->brk.repeats += b.repeats + 1;
      else out.push_back({std::move(b), util::printable(path)});  // a log's name is anyone's text, and printed
    }
  }
  return out;
}

void write_recipe(const std::string& path, const std::string& text) {
  try {
    write_output_file(path, text, "--recipe", "recipe");
  } catch (const Error& e) {
    throw Error("cannot write the recipe to " + path + ": " + e.what());
  }
}

// explain --run CMD: the repro run, explained, and fixes tried until proven (or not).
int run_and_prove(const GlobalOptions& g, const ExplainOptions& o) {
  Output out(g);
  if (!o.logs.empty()) throw Error("explain --run reads the log of its own runs: give it no LOG", Exit::usage);
  explain::HintSet hints = load_hints(o.hints);
  Env env = open_env(g);
  CalibratedRules cr = with_calibration(load_rules(o.rules, true), env.session.get());
  const audit::RuleSet& rules = cr.rules;
  if (!out.json() && !out.quiet() && !cr.note().empty()) out.err(cr.note());
  engine::RunOptions ro;
  ro.command = o.run;
  ro.max_runs = o.max_runs;
  // A torch run keeps about two cores busy (dynamo and inductor's compile): runs at once
  // beyond that share cores and each takes longer, so the search would be slower than
  // one run at a time.
  int spare = default_jobs(env.session->env);
  ro.jobs = o.jobs == -1 ? spare : o.jobs;
  if (o.jobs > spare && !o.oversubscribe) {
    ro.jobs = spare;
    if (!out.json() && !out.quiet())
      out.err("--jobs " + std::to_string(o.jobs) + ": " + std::to_string(spare) + " at once, as many as " +
              env.session->host.name() + " has two cores for (--oversubscribe runs " + std::to_string(o.jobs) +
              " anyway)");
  }
  ro.cold = o.cold;
  std::string cold = engine::cold_runs_because(o.run, o.cold);
  size_t n = 0;
  ro.progress = [&](const engine::TriedRun& t) {
    if (out.json() || out.quiet()) return;
    out.err(run_line(++n, t));
    // A run that started cold although the command runs warm says why; -v says each.
    if (cold.empty() && (g.verbose > 0 || t.start != "warm") && !t.start.empty())
      out.err("  run " + std::to_string(n) + " started " + t.start);
  };
  if (!out.json() && !out.quiet())
    out.err("running `" + o.run + "` with TORCH_LOGS=graph_breaks (at most " + std::to_string(o.max_runs) +
            " runs, " + std::to_string(ro.jobs) + " at once; nothing is written to the environment)");
  if (!out.json() && !out.quiet())
    out.err(cold.empty() ? "runs start warm: one Python imports torch once and forks each run (--cold: each run its "
                           "own Python)"
                         : "runs start cold: " + cold);
  engine::ProvenFixes p = engine::prove_fixes(*env.session, ro, rules, hints);
  std::string recipe = run_recipe(p, o.run);
  if (!o.recipe.empty() && o.recipe != "-" && !recipe.empty()) write_recipe(o.recipe, recipe);
  bool left = std::any_of(p.last.breaks.begin(), p.last.breaks.end(), [](auto& b) { return b.in_library(); });
  // A command that still fails is no success, wherever its break is (the user's code,
  // torch's): exit 3 as when a library break is left.
  bool failing = still_fails(p);
  if (o.recipe == "-") {
    std::cout << recipe;
  } else if (out.json()) {
    nlohmann::json j = run_json(p, recipe);
    j["ok"] = true;
    j["calibration"] = cr.json();
    j["command"] = o.run;
    j["recipe_file"] = recipe.empty() ? nlohmann::json() : or_null(o.recipe);
    j["left"] = explanation_json(p.last);
    out.document(j);
  } else {
    print_run(out, p, recipe, o.recipe, g.verbose);
    if (failing && !left) {
      out.out("");
      out.out("the command still fails, and no break is left inside a library: what stops it is in your code or "
              "torch's:");
      print_explanation(out, p.last, g.verbose);
    }
    if (left) {
      out.out("");
      out.out("what the last kept run still shows:");
      engine::Explanation shown = p.last;
      if (p.fullgraph) {
        // Its proposals are disable, which fullgraph=True fails on too: the line above
        // said so, as the blunt fix; proposing it again would read as a fix.
        shown.fixes.clear();
        for (auto& b : shown.breaks) b.fix.reset();
      }
      print_explanation(out, shown, g.verbose);
    }
  }
  return int(left || failing ? Exit::not_intact : Exit::ok);
}

int run(const GlobalOptions& g, const ExplainOptions& o) {
  if (!o.run.empty()) return run_and_prove(g, o);
  Output out(g);
  if (o.list_hints) return list_hints(out, load_hints(o.hints));
  if (o.logs.empty()) throw Error("explain needs a LOG (a file, or - for stdin), or --list-hints", Exit::usage);
  auto breaks = read_logs(o.logs);
  std::vector<std::string> shown;
  for (auto& l : o.logs) shown.push_back(util::printable(l));
  std::string logs = util::join(shown, ", ");
  if (breaks.empty()) {
    if (out.json()) out.document({{"ok", true}, {"breaks", nlohmann::json::array()}, {"fixes", nlohmann::json::array()}});
    else
      out.out("no dynamo break in " + logs +
              ": no torch._dynamo.exc.Unsupported error, no TORCH_LOGS=graph_breaks record, no "
              "torch._dynamo.explain break reason");
    return int(Exit::ok);
  }
  bool inside = std::any_of(breaks.begin(), breaks.end(),
                            [](const engine::LoggedBreak& b) { return explain::entry_frame(b.brk) >= 0; });
  if (!inside) {
    // Nothing to place in an environment: said from the log alone.
    if (out.json()) {
      out.document({{"ok", true}, {"breaks", outside_json(breaks)}, {"fixes", nlohmann::json::array()}});
    } else {
      out.out("no break in " + logs + " is inside a library: " + std::to_string(breaks.size()) +
              (breaks.size() == 1 ? " break" : " breaks") + " in your own code or the standard library, "
              "which no recipe patches");
      print_outside(out, breaks);
    }
    return int(Exit::ok);
  }
  explain::HintSet hints = load_hints(o.hints);
  Env env = open_env(g);
  CalibratedRules cr = with_calibration(load_rules(o.rules, true), env.session.get());
  engine::Explanation e = engine::explain(*env.session, std::move(breaks), cr.rules, hints);
  std::string recipe = explain_recipe(e, o.logs);
  if (o.recipe == "-") {
    // The recipe alone on stdout, to pipe or redirect; what it answers is in its comments.
    std::cout << recipe;
    size_t n = std::count_if(e.breaks.begin(), e.breaks.end(), [](auto& b) { return b.in_library(); });
    out.err("sitepatch: " + std::to_string(n) + (n == 1 ? " break inside a library; " : " breaks inside libraries; ") +
            (recipe.empty() ? "no fix to propose (run without --recipe - to see why)"
                            : std::to_string(e.fixes.size()) + (e.fixes.size() == 1 ? " edit" : " edits") +
                                  " proposed, each commented with its cost"));
    return int(Exit::not_intact);
  }
  if (!o.recipe.empty() && !recipe.empty()) write_recipe(o.recipe, recipe);
  if (out.json()) {
    nlohmann::json j = explanation_json(e);
    j["ok"] = true;
    j["calibration"] = cr.json();
    j["recipe"] = or_null(recipe);  // null: no fix to propose
    j["recipe_file"] = recipe.empty() ? nlohmann::json() : or_null(o.recipe);
    out.document(j);
  } else {
    print_explanation(out, e, g.verbose);
    if (!out.quiet() && !cr.note().empty()) out.err(cr.note());
    out.out("");
    if (recipe.empty()) {
      out.out("no fix to propose (see each break)");
    } else if (o.recipe.empty()) {
      out.out("recipe (--recipe FILE writes it, for plan and apply):");
      for (auto& l : util::split(recipe, '\n'))
        if (!l.empty()) out.out("  " + l);
    } else if (o.recipe != "-") {
      out.out("wrote " + o.recipe + " (" + std::to_string(e.fixes.size()) + (e.fixes.size() == 1 ? " edit" : " edits") +
              "); next: " + env.session->invocation + " plan " + util::shell_word(o.recipe));
    }
  }
  return int(Exit::not_intact);
}

}  // namespace

Runner register_explain(CLI::App& app, const GlobalOptions& g) {
  auto o = std::make_shared<ExplainOptions>();
  app.add_option("logs", o->logs, "Logs holding dynamo's output (files, or - for stdin)")->type_name("LOG");
  app.add_flag("--list-hints", o->list_hints, "List the hints (shipped, and those --hints adds) and exit");
  app.add_option("--recipe", o->recipe, "Write the proposed fixes as a recipe, ready for plan and apply (- for stdout)")
      ->type_name("FILE");
  app.add_option("--hints", o->hints,
                 "A hints file to add (YAML: hints: [{id, operation, means} | {id, calls, holds, replace-body, "
                 "ensure-import, why}]); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_option("--rules", o->rules, "A rules file to add to audit's, for the walk after the fix; repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_option("--run", o->run,
                 "Run CMD (sh -c, the environment's bin first on PATH) with TORCH_LOGS=graph_breaks, explain its "
                 "breaks, and try fixes narrowest first (a hint's body, the library's pure-Python twin of a C function "
                 "it stops at (substitute_in_graph), assume_constant_result, nonstrict_trace, "
                 "the library's own custom-op seam made real, a custom op, dynamo's config knobs, disable), keeping "
                 "each only if dynamo's counts improve and the compiled code computes what the unpatched program "
                 "computes; writes nothing to the environment")
      ->type_name("CMD");
  app.add_flag("--cold", o->cold,
               "With --run: start every run as its own Python (as sh -c runs CMD), not forked from one that "
               "imported torch once");
  app.add_option("--max-runs", o->max_runs, "With --run: at most N runs of CMD (default 12)")->type_name("N");
  app.add_option("--jobs,-j", o->jobs,
                 "With --run: run up to N candidates at once, each under its own try hook (default and most: "
                 "half the cores where the runs happen, at least 1)")
      ->type_name("N");
  app.add_flag("--oversubscribe", o->oversubscribe,
               "With --run: run --jobs N at once even where the host has fewer than two cores for each");
  app.footer(
      "Reads torch._dynamo.exc.Unsupported errors (\"from user code:\"), TORCH_LOGS=graph_breaks records\n"
      "(repeats whose stack dynamo suppressed are merged) and torch._dynamo.explain's break reasons.\n"
      "Library frames are found by their path below site-packages, so a log from another machine maps;\n"
      "a frame whose line no longer holds the log's function is reported stale.\n"
      "A log cut short or damaged (a break without its stack or reason, bytes that are not text) is\n"
      "refused with what is missing, never read as a clean one.\n"
      "With --run, the log is the command's own output, read after each run: the first run as it is,\n"
      "then one per fix tried (sitepatch try's hook); a table compares the first run with the last\n"
      "kept one (graphs, graph breaks, whether it ran with dynamo raising nothing, wall time).\n"
      "Exit codes: 0 no break inside a library; 1 failed; 2 bad usage, unreadable, cut or damaged log,\n"
      "or unreadable hints file; 3 the log holds breaks inside libraries (with --run: the last kept run's).");
  return [&g, o] {
    if (g.json && o->recipe == "-") throw Error("--json and --recipe -: both print on stdout; give --recipe a file", Exit::usage);
    check_output_file(o->recipe, "--recipe", "recipe");  // before any work: the rule every output file follows
    return run(g, *o);
  };
}

}  // namespace sitepatch::cli
