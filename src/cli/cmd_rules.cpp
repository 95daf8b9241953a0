// sitepatch rules: the rules audit would use, shipped and from --rules files; with
// --calibrate, each rule's probe run by the environment's own torch (what it traces is
// then no break there), and the calibration kept shown beside the rules.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "commands.hpp"
#include "sitepatch/engine/calibrate.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {
namespace {

std::string state_text(const engine::ProbeResult& r) {
  switch (r.state) {
    case engine::ProbeResult::traced: return "traced";
    case engine::ProbeResult::breaks: return "breaks";
    case engine::ProbeResult::not_run: return "not run";
  }
  return "";
}

// What the calibration says of `r`: "" with none, "-" for a rule it has no answer for.
std::string calibrated(const std::optional<engine::Calibration>& cal, const audit::Rule& r) {
  if (!cal) return "";
  auto it = cal->rules.find(r.id);
  if (it == cal->rules.end() || it->second.probe != r.probe) return "-";
  return state_text(it->second);
}

nlohmann::json rules_json(const audit::RuleSet& rules, const std::optional<engine::Calibration>& cal) {
  nlohmann::json arr = nlohmann::json::array();
  for (auto& r : rules.all()) {
    nlohmann::json j = {{"id", r.id},           {"match", r.match},   {"category", r.category},
                        {"message", r.message}, {"severity", audit::to_string(r.severity)},
                        {"origin", r.origin},   {"line", r.line},     {"probe", or_null(r.probe)},
                        {"doc", or_null(r.doc)}};
    std::string c = calibrated(cal, r);
    j["calibration"] = c.empty() || c == "-" ? nlohmann::json() : nlohmann::json(c == "not run" ? "not_run" : c);
    if (cal)
      if (auto it = cal->rules.find(r.id); it != cal->rules.end() && !it->second.why.empty() && c != "-")
        j["why"] = it->second.why;
    arr.push_back(std::move(j));
  }
  return arr;
}

// The terminal's width when stdout is one ($COLUMNS first, as shells set it); 0 when it
// is not, or cannot say: a pipe gets every line whole.
size_t terminal_width() {
  if (!::isatty(STDOUT_FILENO)) return 0;
  if (const char* c = std::getenv("COLUMNS"); c && std::atoi(c) > 0) return size_t(std::atoi(c));
  struct winsize ws{};
  return ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
}

// `text` cut to `width` columns, its end shown as "..." when cut.
std::string fitted(const std::string& text, size_t width) {
  return text.size() <= width ? text : text.substr(0, width > 3 ? width - 3 : 0) + "...";
}

void print_table(const Output& o, const audit::RuleSet& rules, const std::optional<engine::Calibration>& cal) {
  size_t wi = 2, wm = 5, wc = 8, wf = 4;
  for (auto& r : rules.all()) {
    wi = std::max(wi, r.id.size());
    wm = std::max(wm, r.match.size());
    wc = std::max(wc, r.category.size());
    wf = std::max(wf, r.origin.size() + 1 + std::to_string(r.line).size());
  }
  // The calibration, when shown, right after the id: the matches can be long.
  std::string torch = cal ? "TORCH " + cal->torch : "";
  size_t wt = std::max<size_t>(torch.size(), 7);
  // On a terminal, the MATCH column (the widest) gives way so that each row fits.
  if (size_t cols = terminal_width()) {
    size_t rest = wi + 2 + (cal ? wt + 2 : 0) + 2 + wc + 2 + 8 + 2 + wf;
    if (rest + wm > cols) wm = std::max<size_t>(12, cols > rest ? cols - rest : 0);
  }
  o.out(o.paint(fmt::format("{:<{}}  {}{:<{}}  {:<{}}  {:<8}  {}", "ID", wi, cal ? fmt::format("{:<{}}  ", torch, wt) : "",
                            "MATCH", wm, "CATEGORY", wc, "SEVERITY", "FROM"),
                Paint::header));
  for (auto& r : rules.all())
    o.out(fmt::format("{:<{}}  {}{:<{}}  {:<{}}  {:<8}  {}:{}", r.id, wi,
                      cal ? fmt::format("{:<{}}  ", calibrated(cal, r), wt) : "", fitted(r.match, wm), wm, r.category, wc,
                      audit::to_string(r.severity), r.origin, r.line));
}

// What explain --run may hold as a constant here, one line per state.
void print_guards(Output& o, const engine::GuardCalibration& g) {
  std::map<std::string, std::vector<std::string>> by;
  for (auto& [key, p] : g.guards) by[engine::guard_state_name(p.state)].push_back(key);
  o.err("what dynamo holds as a constant under assume_constant_result (explain --run asks this):");
  for (auto& [state, keys] : by) {
    std::string line;
    for (auto& k : keys) line += (line.empty() ? "" : ", ") + k;
    o.err("  " + state + ": " + line);
  }
}

}  // namespace

Runner register_rules(CLI::App& app, const GlobalOptions& g) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto no_default = std::make_shared<bool>(false);
  auto calibrate = std::make_shared<bool>(false);
  app.add_option("--rules", *files, "A rules file to add, as audit --rules does; repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_flag("--no-default-rules", *no_default, "Leave out the shipped set");
  app.add_flag("--calibrate", *calibrate,
               "Run each rule's probe inside torch.compile(fullgraph=True) with the environment's own\n"
               "torch (one process, a few seconds) and keep the answer: audit and explain then leave out\n"
               "the rules this torch traces. Also probes what its dynamo holds as a constant for\n"
               "assume_constant_result (a tensor's device, dtype, sizes; a module-level object's method),\n"
               "which explain --run asks before it offers that fix. Works over --host");
  app.footer(
      "With an environment (--venv, --host, or an active one), the TORCH column shows the kept\n"
      "calibration for the torch installed there: traced, breaks, not run (the probe cannot run\n"
      "there: a module not installed), or - (no answer for this rule or its probe).");
  return [&g, files, no_default, calibrate] {
    audit::RuleSet rules = load_rules(*files, !*no_default);
    Output o(g);
    std::optional<engine::Calibration> cal;
    std::optional<engine::GuardCalibration> guards;
    if (*calibrate) {
      Env env = open_env(g);
      if (!o.json() && !o.quiet()) o.err("calibrating against the torch in " + env.session->env.prefix + " ...");
      cal = engine::calibrate(*env.session, rules);
      if (!o.json() && !o.quiet()) {
        size_t traced = 0, breaks = 0, not_run = 0;
        for (auto& [id, r] : cal->rules)
          (r.state == engine::ProbeResult::traced ? traced : r.state == engine::ProbeResult::breaks ? breaks : not_run)++;
        o.err(fmt::format("torch {}: {} traced, {} break, {} not run, in {:.1f} s; kept for audit and explain", cal->torch,
                          traced, breaks, not_run, cal->seconds));
      }
      guards = engine::calibrate_guards(*env.session, false);
      if (!guards->error.empty()) throw Error("probing what dynamo holds as a constant: " + guards->error);
      if (!o.json() && !o.quiet()) print_guards(o, *guards);
    } else if (!g.venv.empty() || !g.host.empty()) {
      Env env = open_env(g);
      cal = engine::kept_calibration(*env.session);
    }
    if (o.json()) {
      nlohmann::json doc = {{"ok", true}, {"rules", rules_json(rules, cal)}};
      doc["torch"] = cal ? nlohmann::json(cal->torch) : nlohmann::json();
      if (guards) {
        nlohmann::json c = nlohmann::json::object();
        for (auto& [key, p] : guards->guards) c[key] = {{"state", engine::guard_state_json(p.state)}, {"why", p.why}};
        doc["constants"] = c;
      }
      o.document(doc);
      return int(Exit::ok);
    }
    print_table(o, rules, cal);
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli
