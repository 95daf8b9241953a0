// sitepatch audit: what else breaks the same way. From one function (the call graph
// across the environment's modules, chains to flagged operations), or over a whole
// distribution, module, environment or folder (every function that directly performs
// one).
#include <unistd.h>

#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "sitepatch/engine/audit.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

struct AuditOptions {
  std::string entry;
  int depth = 0;
  std::string package, module, path;
  bool all = false;
  std::vector<std::string> rules;
  bool no_default_rules = false;
  bool suggest = false;
};

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A bar on stderr, only on a terminal and only once a scan has taken a second.
engine::Progress progress_bar(const GlobalOptions& g) {
  if (g.json || g.quiet || !::isatty(STDERR_FILENO)) return nullptr;
  auto start = std::chrono::steady_clock::now();
  auto shown = std::make_shared<bool>(false);
  return [start, shown](size_t done, size_t total) {
    if (!*shown && std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;
    *shown = true;
    size_t width = 30, filled = total ? done * width / total : width;
    std::cerr << "\raudit [" << std::string(filled, '#') << std::string(width - filled, '.') << "] " << done << "/"
              << total << " files" << (done == total ? "\r\033[K" : "") << std::flush;
  };
}

nlohmann::json rule_json(const audit::Rule& r) {
  return {{"id", r.id}, {"match", r.match}, {"category", r.category}, {"message", r.message}};
}

std::string suggest_recipe(const engine::CallAudit& a, const std::string& entry) {
  std::vector<std::pair<std::string, std::string>> picked;  // module, qualified
  std::vector<std::string> why;
  for (auto& c : a.graph.chains) {
    for (size_t i = c.steps.size(); i-- > 0;) {
      const auto& st = c.steps[i];
      if (std::find(a.entry_dist_modules.begin(), a.entry_dist_modules.end(), st.module) ==
          a.entry_dist_modules.end())
        continue;
      std::pair<std::string, std::string> key{st.module, st.qualified};
      if (std::find(picked.begin(), picked.end(), key) == picked.end()) {
        picked.push_back(key);
        why.push_back(c.operation + " (" + c.steps.back().file + ":" + std::to_string(c.steps.back().line) + ")");
      }
      break;
    }
  }
  if (picked.empty()) return "";
  std::string id = site::normalize_name(a.entry_dist) + "-dynamo";
  std::string out = "# Suggested by `sitepatch audit " + entry + " --suggest`: review before applying.\n"
                    "# Each edit keeps dynamo (torch.compile) out of the nearest function of " +
                    a.entry_dist + "\n# on a chain from " + entry + " to an operation it cannot trace.\n";
  out += "id: " + id + "\n";
  out += "description: Keep torch.compile out of what " + entry + " reaches\n";
  out += "requires: " + a.entry_dist + "==" + a.entry_version + "\n";
  out += "edits:\n";
  for (size_t i = 0; i < picked.size(); ++i) {
    out += "  # reaches " + why[i] + "\n";
    out += "  - module: " + picked[i].first + "\n";
    out += "    function: " + picked[i].second + "\n";
    out += "    add-decorator: torch.compiler.disable\n";
    out += "    ensure-import: import torch\n";
  }
  return out;
}

int run_calls(const GlobalOptions& g, const AuditOptions& o, const audit::RuleSet& rules) {
  size_t colon = o.entry.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == o.entry.size())
    throw Error("entry `" + o.entry + "` must be MODULE:FUNCTION, e.g. flashinfer.fp4_quantization:fp4_quantize",
                Exit::usage);
  audit::WalkOptions w{o.entry.substr(0, colon), o.entry.substr(colon + 1), o.depth};
  Env env = open_env(g);
  Output out(g);
  engine::CallAudit a = engine::audit_calls(*env.session, rules, w, o.suggest);
  const audit::CallGraph& cg = a.graph;

  if (o.suggest) {
    std::string recipe = suggest_recipe(a, o.entry);
    if (recipe.empty()) {
      out.err("sitepatch: no chain from " + o.entry + " reaches a flagged operation in its own distribution; nothing to suggest");
      return int(Exit::ok);
    }
    std::cout << recipe;
    return int(Exit::ok);
  }
  if (out.json()) {
    nlohmann::json chains = nlohmann::json::array(), unresolved = nlohmann::json::array();
    for (auto& c : cg.chains) {
      nlohmann::json steps = nlohmann::json::array();
      for (auto& s : c.steps)
        steps.push_back({{"function", s.name()}, {"module", s.module}, {"qualified", s.qualified},
                         {"file", s.file}, {"line", s.line}});
      chains.push_back({{"operation", c.operation}, {"rule", rule_json(c.rule)}, {"steps", steps}});
    }
    for (auto& u : cg.unresolved)
      unresolved.push_back({{"function", u.function}, {"file", u.file}, {"line", u.line}, {"call", u.call}, {"why", u.why}});
    out.document({{"ok", true}, {"entry", o.entry}, {"chains", chains}, {"unresolved", unresolved},
                  {"cycles", cg.cycles}, {"functions", cg.functions}, {"modules", cg.modules}});
    return int(Exit::ok);
  }

  size_t width = 0;
  for (auto& c : cg.chains)
    for (auto& s : c.steps) width = std::max(width, s.name().size());
  if (!out.quiet())
    out.out(cg.chains.empty() ? o.entry + " reaches no flagged operation"
                              : o.entry + " reaches " + plural(cg.chains.size(), "flagged operation", "flagged operations"));
  for (size_t i = 0; i < cg.chains.size(); ++i) {
    const auto& c = cg.chains[i];
    out.out("");
    out.out(out.paint(fmt::format("[{}] {} ({}: {})", i + 1, c.operation, c.rule.category, c.rule.message), Paint::header));
    for (auto& s : c.steps)
      out.out(fmt::format("    {:<{}}  {}:{}", s.name(), width, s.file, s.line));
  }
  if (out.quiet()) return int(Exit::ok);
  out.out("");
  std::string summary = plural(cg.functions, "function", "functions") + " in " +
                        plural(cg.modules, "module", "modules") + " walked";
  if (!cg.cycles.empty()) summary += "; " + plural(cg.cycles.size(), "cycle", "cycles") + " in the call graph";
  out.out(summary);
  if (!cg.unresolved.empty())
    out.out(plural(cg.unresolved.size(), "call", "calls") + " could not be resolved statically" +
            (g.verbose ? ":" : " (-v lists them)"));
  if (g.verbose) {
    for (auto& u : cg.unresolved)
      out.out(fmt::format("    {}:{}  {}  {}  ({})", u.file, u.line, u.function, u.call, u.why));
    for (auto& cyc : cg.cycles) out.out("cycle: " + util::join(cyc, " -> ") + " -> " + cyc.front());
  }
  return int(Exit::ok);
}

int run_scan(const GlobalOptions& g, const AuditOptions& o, const audit::RuleSet& rules) {
  engine::ScanScope scope = !o.package.empty() ? engine::ScanScope::package
                            : !o.module.empty() ? engine::ScanScope::module
                            : o.all             ? engine::ScanScope::all
                                                : engine::ScanScope::path;
  std::string what = !o.package.empty() ? o.package : !o.module.empty() ? o.module : o.path;
  Output out(g);
  Env env;
  host::Host* h = nullptr;
  if (scope == engine::ScanScope::path && g.host.empty()) {
    // A folder on this machine needs no environment.
    env.host = host::make_local_host();
    h = env.host.get();
  } else {
    env = open_env(g);
    h = env.host.get();
  }
  auto r = engine::audit_scan(*h, env.session.get(), rules, scope, what, progress_bar(g));

  size_t calls = 0, functions = 0, top = 0;
  for (auto& f : r.files) {
    std::string last;
    for (auto& x : f.findings) {
      ++calls;
      if (x.function.empty()) ++top;
      else if (x.function + "@" + std::to_string(x.function_line) != last) {
        ++functions;
        last = x.function + "@" + std::to_string(x.function_line);
      }
    }
  }
  if (out.json()) {
    nlohmann::json files = nlohmann::json::array();
    for (auto& f : r.files) {
      nlohmann::json fs = nlohmann::json::array();
      for (auto& x : f.findings)
        fs.push_back({{"function", x.function.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.module + ":" + x.function)},
                      {"line", x.line}, {"column", x.column}, {"operation", x.operation}, {"written", x.written},
                      {"rule", rule_json(*x.rule)}});
      files.push_back({{"file", f.rel}, {"module", f.module}, {"findings", fs}});
    }
    out.document({{"ok", true}, {"root", r.root}, {"files", files}, {"calls", calls}, {"functions", functions},
                  {"module_level_calls", top}, {"files_total", r.files_total}, {"files_parsed", r.files_parsed},
                  {"bytes_total", r.bytes_total}, {"bytes_parsed", r.bytes_parsed}});
    return int(Exit::ok);
  }
  for (auto& f : r.files)
    for (auto& x : f.findings)
      out.out(fmt::format("{}:{}:{}: {}: {} [{}]", f.rel, x.line, x.column,
                          x.function.empty() ? f.module + " (module level)" : f.module + ":" + x.function,
                          x.operation, x.rule->category));
  if (out.quiet()) return int(Exit::ok);
  out.out(fmt::format("{} in {}{} in {} of {} ({} parsed after the text pre-filter)",
                      plural(calls, "flagged call", "flagged calls"), plural(functions, "function", "functions"),
                      top ? fmt::format(" and {} at module level", top) : "",
                      plural(r.files.size(), "file", "files"), r.files_total, r.files_parsed));
  return int(Exit::ok);
}

}  // namespace

Runner register_audit(CLI::App& app, const GlobalOptions& g) {
  auto o = std::make_shared<AuditOptions>();
  app.add_option("entry", o->entry,
                 "MODULE:FUNCTION to walk the calls from (FUNCTION may be Class.method)")
      ->type_name("MODULE:FUNCTION");
  app.add_option("--depth", o->depth, "Follow chains of at most N calls (default: no limit)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  app.add_option("--package", o->package, "Scan every module of an installed distribution")->type_name("DIST");
  app.add_option("--module", o->module, "Scan a module, or a package and everything under it")
      ->type_name("PREFIX");
  app.add_flag("--all", o->all, "Scan every installed distribution");
  app.add_option("--path", o->path, "Scan every .py file under a folder (no environment needed)")->type_name("DIR");
  // One file per --rules, so a rules file never swallows the entry after it.
  app.add_option("--rules", o->rules, "A rules file to add (YAML: rules: [{id, match, category, message}]); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_flag("--no-default-rules", o->no_default_rules, "Use only the --rules files, not the shipped set");
  app.add_flag("--suggest", o->suggest,
               "Print a recipe adding @torch.compiler.disable to the nearest function of each chain\n"
               "that the entry's distribution owns");
  app.footer(
      "Without an entry, --package, --module, --all or --path lists every function that directly\n"
      "performs a flagged operation (calls at module level are listed as such). Names are matched\n"
      "as resolved through imports: `from subprocess import Popen; Popen()` is subprocess.Popen.\n"
      "'sitepatch rules' lists the rules.");
  return [&g, o] {
    int modes = !o->entry.empty() + !o->package.empty() + !o->module.empty() + o->all + !o->path.empty();
    if (modes != 1)
      throw Error("audit needs exactly one of MODULE:FUNCTION, --package, --module, --all, --path", Exit::usage);
    if (o->depth && o->entry.empty()) throw Error("--depth applies to MODULE:FUNCTION only", Exit::usage);
    if (o->suggest && o->entry.empty()) throw Error("--suggest applies to MODULE:FUNCTION only", Exit::usage);
    audit::RuleSet rules = load_rules(o->rules, !o->no_default_rules);
    return o->entry.empty() ? run_scan(g, *o, rules) : run_calls(g, *o, rules);
  };
}

}  // namespace sitepatch::cli
