// explain --run's answer: each run as it ends (progress), then the before/after table
// measured from the runs, the fixes kept, and the proven recipe.
#include <set>

#include <fmt/format.h>

#include "explain_report.hpp"
#include "sitepatch/recipe/version.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

std::string count(int v) { return v < 0 ? "-" : std::to_string(v); }

std::string yes_no(bool b) { return b ? "yes" : "no"; }

nlohmann::json checked_json(const engine::Checked& c) {
  return {{"calls", c.calls < 0 ? nlohmann::json() : nlohmann::json(c.calls)},
          {"vs_record", c.vs_record},
          {"vs_eager", c.vs_eager},
          {"recorded", c.recorded},
          {"mismatch", or_null(c.mismatch)},
          {"notes", c.notes}};
}

nlohmann::json graph_breaks_json(const engine::ProvenFixes& p) {
  nlohmann::json out = nlohmann::json::array();
  for (auto& [id, url] : p.graph_breaks) out.push_back({{"id", id}, {"url", url}});
  return out;
}

// The run that measured the kept fixes: the last kept one (the first run when none).
const engine::TriedRun& last_kept(const engine::ProvenFixes& p) {
  const engine::TriedRun* r = &p.runs.front();
  for (auto& t : p.runs)
    if (t.kept) r = &t;
  return *r;
}

nlohmann::json counts_json(const engine::RunCounts& c) {
  return {{"status", c.status},
          {"seconds", c.seconds},
          {"graphs", c.graphs < 0 ? nlohmann::json() : nlohmann::json(c.graphs)},
          {"graph_breaks", c.graph_breaks < 0 ? nlohmann::json() : nlohmann::json(c.graph_breaks)},
          {"compiled", c.compiled()},
          {"library_breaks", c.library_breaks},
          {"failure", or_null(c.failure)},
          {"raised", or_null(c.raised)},
          {"checked", checked_json(c.checked)}};
}

nlohmann::json frames_json(const std::vector<engine::FrameNote>& notes) {
  nlohmann::json out = nlohmann::json::array();
  for (auto& n : notes)
    out.push_back({{"function", n.function},
                   {"at", n.at},
                   {"assume_constant", n.assume_constant},
                   {"why", n.why},
                   {"custom_op", n.custom_op},
                   {"custom_op_why", n.custom_op_why},
                   {"seam_why", n.seam_why}});
  return out;
}

// Each library frame of a run's breaks, and why it was or was not a candidate for
// assume_constant_result (-v).
void print_frames(const Output& out, const engine::ProvenFixes& p) {
  for (size_t i = 0; i < p.runs.size(); ++i) {
    if (p.runs[i].frames.empty()) continue;
    out.out("frames of run " + std::to_string(i + 1) + "'s breaks (assume_constant_result fits where every call passes "
            "constants and the result is one dynamo can hold):");
    for (auto& n : p.runs[i].frames) {
      out.out("  " + n.function + " (" + n.at + "): " + (n.assume_constant ? "candidate: " : "no: ") + n.why);
      out.out("    register-custom-op: " + std::string(n.custom_op ? "candidate: " : "no: ") + n.custom_op_why);
      if (!n.seam_why.empty()) out.out("    custom-op seam: " + n.seam_why);
    }
  }
}

// Under fullgraph=True, a search whose kept fixes still leave a break found no fix: said
// plainly, with what they got past and the blunt fix (which fullgraph=True also fails
// on). "" when the kept fixes compile, or without fullgraph (fewer breaks is a win).
// Whether the kept fixes leave fullgraph=True failing: no recipe is written then.
bool withheld(const engine::ProvenFixes& p) { return p.fullgraph && !last_kept(p).counts.compiled(); }

std::string no_narrow_fix(const engine::ProvenFixes& p) {
  const engine::TriedRun& last = last_kept(p);
  // --max-runs stopped the search: what is left untried may still be the fix.
  if (!withheld(p) || !p.untried.empty()) return "";
  std::string out = "no fix keeps fullgraph=True";
  if (!p.kept.empty())
    out += ": the " + std::string(p.kept.size() == 1 ? "fix" : std::to_string(p.kept.size()) + " fixes") +
           " kept got past " + std::to_string(p.kept.size()) + (p.kept.size() == 1 ? " break" : " breaks") +
           (last.breaks.empty() ? ", but the command still fails" : ", but dynamo still stops at " + last.breaks.front());
  for (auto& b : p.last.breaks)
    if (b.in_library() && size_t(b.entry) < b.frames.size()) {
      out += "; the blunt one is disable on " + b.frames[size_t(b.entry)].name() +
             " (fullgraph=True still fails there: the call of a disabled function is a break)";
      break;
    }
  return out;
}

// Config knobs kept are lines of the user's code: the recipe says it needs them.
std::string config_comment(const engine::ProvenFixes& p) {
  std::string out;
  for (auto& line : engine::config_lines(p.kept))
    out += "# Also needed, in your code before torch.compile (no recipe writes it): " + recipe::yaml_comment(line) + "\n";
  return out;
}

// The kinds of graph break the runs met, with their pages, for the recipe's comments.
std::string graph_break_lines(const engine::ProvenFixes& p) {
  std::string out;
  for (auto& [id, url] : p.graph_breaks) out += "# Graph break " + recipe::yaml_comment(id + ": " + url) + "\n";
  return out;
}

}  // namespace

bool still_fails(const engine::ProvenFixes& p) { return last_kept(p).counts.status != 0; }

std::string run_line(size_t n, const engine::TriedRun& t) {
  const auto& c = t.counts;
  std::string state = t.minimizing ? t.verdict : t.candidate ? (t.kept ? "kept: " : "rejected: ") + t.verdict : t.verdict;
  return fmt::format("run {}: {}: exit {}, graphs {}, graph breaks {}, {:.1f} s{}; {}", n, t.what, c.status,
                     count(c.graphs), count(c.graph_breaks), c.seconds,
                     t.batch > 1 ? " (" + std::to_string(t.batch) + " at once)" : std::string(), state);
}

std::string run_recipe(const engine::ProvenFixes& p, const std::string& command) {
  // A recipe under which fullgraph=True still fails proves nothing the user asked for.
  bool edits = std::any_of(p.kept.begin(), p.kept.end(), [](auto& k) { return k.kind != engine::Candidate::config; });
  if (!edits || withheld(p)) return "";
  std::vector<std::string> why;
  for (auto& k : p.kept) {
    std::string v;
    for (auto& r : p.runs)
      if (r.kept && r.candidate && r.candidate->key() == k.key()) v = r.verdict;
    why.push_back(k.describe() + ": " + v + "; cost: " + k.fix.cost);
  }
  std::set<std::pair<std::string, std::string>> dists;
  for (auto& k : p.kept)
    if (!k.fix.dist.empty()) dists.insert({k.fix.dist, k.fix.version});
  std::string requires_line = dists.size() == 1 ? proposed_requires(dists.begin()->first, dists.begin()->second) : "";
  std::string id = (!requires_line.empty() ? site::normalize_name(dists.begin()->first) + "-" : std::string()) + "dynamo-proven";
  return "# Proven by " + recipe::yaml_comment("`sitepatch explain --run " + util::shell_word(command) + "`") +
         ": each edit was kept because the\n"
         "# run with it measured better than without (the comment above it says how).\n"
         "# Checked: " + recipe::yaml_comment(last_kept(p).counts.checked.how()) + ".\n" + graph_break_lines(p) +
         config_comment(p) +
         engine::proven_recipe(p.kept, why, id, requires_line);
}

void print_run(const Output& out, const engine::ProvenFixes& p, const std::string& recipe, const std::string& file,
               int verbose) {
  const engine::RunCounts& before = p.runs.front().counts;
  const engine::RunCounts* after = &before;
  for (auto& r : p.runs)
    if (r.kept) after = &r.counts;
  out.out("");
  out.out(fmt::format("{:<30} {:>10} {:>10}", "", "before", "after"));
  out.out(fmt::format("{:<30} {:>10} {:>10}", "graphs", count(before.graphs), count(after->graphs)));
  out.out(fmt::format("{:<30} {:>10} {:>10}", "graph breaks", count(before.graph_breaks), count(after->graph_breaks)));
  out.out(fmt::format("{:<30} {:>10} {:>10}", "breaks inside libraries", before.library_breaks, after->library_breaks));
  out.out(fmt::format("{:<30} {:>10} {:>10}", "ran, dynamo raised nothing", yes_no(before.compiled()),
                      yes_no(after->compiled())));
  out.out(fmt::format("{:<30} {:>9.1f}s {:>9.1f}s", "wall time", before.seconds, after->seconds));
  out.out(fmt::format("{} runs; stopped: {}", p.runs.size(), p.stop));
  for (auto& s : p.skipped) out.out("not run: " + s);
  for (auto& u : p.undone) out.out("undone: " + u);
  for (auto& d : p.dropped) out.out("dropped: " + d);
  for (auto& [id, url] : p.graph_breaks) out.out("graph break " + id + ": " + url);
  if (!p.untried.empty()) {
    out.out("left untried (--max-runs " + std::to_string(p.runs.size()) + " was spent; raise it to try them):");
    for (auto& u : p.untried) out.out("  " + u);
  }
  if (verbose > 0) print_frames(out, p);
  out.out("");
  if (recipe.empty() && (p.kept.empty() || withheld(p))) {
    std::string plainly = no_narrow_fix(p);
    out.out(plainly.empty() ? "no fix proven: nothing to write" : plainly + "; nothing written");
    return;
  }
  out.out(std::to_string(p.kept.size()) + (p.kept.size() == 1 ? " fix" : " fixes") + " proven:");
  for (auto& k : p.kept) out.out("  " + k.describe());
  out.out("checked: " + last_kept(p).counts.checked.how());
  if (auto lines = engine::config_lines(p.kept); !lines.empty()) {
    out.out("add to your code, before torch.compile (no recipe writes it):");
    for (auto& l : lines) out.out("  " + l);
  }
  if (!p.after.empty()) {
    // What the next restart would meet past the log: the first run's walks from the
    // user's code, marked by the kept fixes.
    out.out("");
    out.out("after the fixes kept, the walk from your code (audit's chains, the log's among them):");
    print_user_walks(out, p.after, 0);
  }
  if (recipe.empty()) {
    out.out("no recipe: what was proven is a line of your code");
  } else if (file.empty()) {
    out.out("recipe (--recipe FILE writes it, for plan and apply):");
    for (auto& l : util::split(recipe, '\n'))
      if (!l.empty()) out.out("  " + l);
  } else {
    out.out("wrote " + file);
  }
}

nlohmann::json run_json(const engine::ProvenFixes& p, const std::string& recipe) {
  nlohmann::json runs = nlohmann::json::array(), kept = nlohmann::json::array();
  for (auto& r : p.runs)
    runs.push_back({{"what", r.what},
                    {"tried", r.candidate ? nlohmann::json(r.candidate->describe()) : nlohmann::json()},
                    {"kept", r.kept},
                    {"verdict", r.verdict},
                    {"breaks", r.breaks},
                    {"batch", r.batch},
                    {"minimizing", r.minimizing},
                    {"start", r.start},
                    {"frames", frames_json(r.frames)},
                    {"counts", counts_json(r.counts)}});
  for (auto& k : p.kept) {
    nlohmann::json more = nlohmann::json::array();
    for (auto& m : k.more)
      more.push_back({{"module", m.module}, {"function", m.function}, {"occurrence", m.occurrence},
                      {"action", m.action}, {"code", m.code}});
    kept.push_back({{"module", k.fix.module},
                    {"function", k.fix.function},
                    {"action", k.fix.action},
                    {"code", k.fix.code},
                    {"describe", k.describe()},
                    {"more", more}});
  }
  engine::Explanation after;
  after.user_walks = p.after;
  return {{"runs", runs}, {"kept", kept}, {"stop", p.stop}, {"recipe", or_null(recipe)},
          {"checked", p.kept.empty() ? nlohmann::json() : nlohmann::json(last_kept(p).counts.checked.how())},
          {"no_fix", or_null(no_narrow_fix(p))},
          {"untried", p.untried}, {"skipped", p.skipped}, {"undone", p.undone}, {"dropped", p.dropped},
          {"graph_breaks", graph_breaks_json(p)},
          {"after", explanation_json(after)["user_walks"]}};
}

}  // namespace sitepatch::cli
