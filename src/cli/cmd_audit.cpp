// sitepatch audit: what else breaks the same way. From one function (the call graph
// across the environment's modules, chains to flagged operations), or over a whole
// distribution, module, environment or folder (every function that directly performs
// one).
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "audit_report.hpp"
#include "audit_triage.hpp"
#include "commands.hpp"
#include "output_file.hpp"
#include "sitepatch/recipe/version.hpp"
#include "sitepatch/audit/ignore.hpp"
#include "sitepatch/util/file.hpp"
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
  std::string fail_on;  // "", "error", "warning", "info"
  bool strict = false;
  std::vector<std::string> ignore;
  std::string format = "text";  // text, json, sarif
  std::string callgraph;        // MODULE:FUNCTION: where the walked call graph goes as JSON
  Triage triage;                // --min-severity, --category, --rule, --summary
};

// A bar on stderr, only on a terminal and only once a scan has taken a second.
engine::Progress progress_bar(const GlobalOptions& g, const AuditOptions& o) {
  if (g.json || o.format != "text" || g.quiet || !::isatty(STDERR_FILENO)) return nullptr;
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

// Every problem of every ignore file at once: malformed entries and rules not loaded.
std::vector<audit::IgnoreEntry> load_ignores(const std::vector<std::string>& files, const audit::RuleSet& rules) {
  std::vector<audit::IgnoreEntry> all;
  std::vector<std::string> unknown;
  for (auto& path : files) {
    auto text = util::read_named_file(path);
    if (!text) throw Error("cannot read ignore file " + text.error(), Exit::usage);
    std::vector<std::string> malformed;
    auto entries = audit::parse_ignore(*text, path, &malformed);
    std::vector<std::pair<int, std::string>> lines;  // this file's problems, by line
    auto line_of = [&](const std::string& l) {
      size_t a = l.find(':', path.size()), b = a == std::string::npos ? a : l.find(':', a + 1);
      return a == std::string::npos || b == std::string::npos ? 0 : std::atoi(l.substr(a + 1, b - a - 1).c_str());
    };
    for (auto& l : malformed) lines.emplace_back(line_of(l), l);
    for (auto& e : entries) {
      bool known = e.rule.empty() ||  // said already: `rule` is missing
                   std::any_of(rules.all().begin(), rules.all().end(), [&](const audit::Rule& r) { return r.id == e.rule; });
      if (!known) {
        std::vector<std::string> ids;
        for (auto& r : rules.all()) ids.push_back(r.id);
        auto near = util::nearest(e.rule, ids, 1);
        std::string l = e.where() + ": rule `" + e.rule + "` is not loaded" +
                        (near.empty() ? "" : "; did you mean `" + near[0] + "`?");
        lines.emplace_back(line_of(l), l);
      }
      all.push_back(std::move(e));
    }
    std::stable_sort(lines.begin(), lines.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [_, l] : lines) unknown.push_back(l);
  }
  if (!unknown.empty()) throw Error("invalid ignore file\n" + util::join(unknown, "\n"), Exit::usage);
  return all;
}

// The limits of this tool, printed always, never only under -v: a name resolved in a
// circle (a valid package does not loop, and each such call hides what it leads to), and
// an analysis stopped at its bound of values held (the answer is cut).
void print_limits(const Output& out, const audit::CallGraph& cg) {
  std::vector<const audit::Unresolved*> circles;
  bool cut = false;
  std::set<std::tuple<std::string, int, std::string>> seen;
  for (auto& u : cg.unresolved) {
    if (!u.limit || !seen.insert({u.file, u.line, u.call}).second) continue;
    if (u.call == "(the analysis)") cut = true;
    else circles.push_back(&u);
  }
  if (cut)
    out.out(out.paint("warning: the analysis stopped at its limit of values held (a limit of this tool); the "
                      "chains above are what it had found, and there may be more",
                      Paint::warn));
  if (circles.empty()) return;
  out.out(out.paint("warning: " + plural(circles.size(), "call", "calls") +
                        (circles.size() == 1 ? " resolves" : " resolve") +
                        " in a circle, which sitepatch cannot follow (a limit of this tool; "
                        "if the package imports, please report it):",
                    Paint::warn));
  for (auto* u : circles)
    out.out(fmt::format("    {}:{}  {}  {}  ({})", util::printable(u->file), u->line, u->function, u->call, u->why));
}

// With -v: each finding the ignore file accepted, and why.
void print_ignored(const Output& out, const std::vector<Reported>& found) {
  size_t n = std::count_if(found.begin(), found.end(), [](const Reported& f) { return f.ignored; });
  if (n == 0) return;
  out.out(plural(n, "finding", "findings") + " accepted by the ignore file:");
  for (auto& f : found)
    if (f.ignored)
      out.out(fmt::format("    {}:{}  {}  {}  ({}: {})", util::printable(f.file), f.line, f.function, f.operation, f.ignored->where(),
                          f.ignored->reason));
}

// Ignore entries that accepted nothing, as linters report unused suppressions: left
// alone, an entry outlives the code it was written for and hides what replaces it.
void print_unused(const Output& out, const std::vector<const audit::IgnoreEntry*>& unused) {
  for (auto* e : unused) out.out(out.paint(unused_message(*e), Paint::warn));
}

// The gate's exit code, with a line on stderr saying why it is not 0. `gaps` says what
// the answer lacks ("" when complete); under --strict, so do unused ignore entries.
int finish(const Output& out, const AuditOptions& o, const std::vector<Reported>& found, const std::string& gaps,
           size_t unused) {
  std::optional<audit::Severity> fail_on;
  if (!o.fail_on.empty()) fail_on = audit::parse_severity(o.fail_on);
  int code = gate(found, fail_on, o.strict, !gaps.empty() || unused > 0);
  if (code == int(Exit::ok)) return code;
  size_t over = 0;
  for (auto& f : found) over += fail_on && !f.ignored && f.rule->severity >= *fail_on;
  if (over) {
    out.err(fmt::format("sitepatch: {} at or above {} (--fail-on {})", plural(over, "finding", "findings"),
                        o.fail_on, o.fail_on));
    return code;
  }
  std::vector<std::string> why;
  if (!gaps.empty()) why.push_back(gaps);
  if (unused) why.push_back(plural(unused, "ignore entry", "ignore entries") + " accepted no finding");
  out.err("sitepatch: " + util::join(why, " and ") + " (--strict)");
  return code;
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
  out += "# requires: the installed version, up to its next minor release\n";
  out += "requires: " + recipe::up_to_next_minor(a.entry_dist, a.entry_version) + "\n";
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

// The chains, then what the walk could not see (-v: in full).
void print_walk(const Output& out, const GlobalOptions& g, const std::string& entry, const audit::CallGraph& cg,
                const std::vector<Reported>& found, const std::vector<const audit::IgnoreEntry*>& unused) {
  size_t ignored = std::count_if(found.begin(), found.end(), [](const Reported& f) { return f.ignored; });
  size_t shown = found.size() - ignored;
  size_t width = 0;
  for (auto& f : found)
    for (auto& s : f.steps) width = std::max(width, s.name().size());
  if (!out.quiet() || shown == 0) out.out(walk_conclusion(entry, cg, shown, ignored, g.verbose > 0));
  size_t number = 0;
  for (auto& f : found) {
    if (f.ignored) continue;
    out.out("");
    out.out(out.paint(fmt::format("[{}] {} ({}, {}: {}) {}", ++number, f.operation, f.rule->category,
                                  audit::to_string(f.rule->severity), f.rule->message, rule_tag(*f.rule)),
                      Paint::header));
    for (auto& s : f.steps)
      out.out(fmt::format("    {:<{}}  {}:{}", s.name(), width, util::printable(s.file), s.line) +
              (s.via.empty() ? "" : "  (" + s.via + ")"));
  }
  if (out.quiet()) return;
  if (shown > 0) {
    out.out("");
    std::string summary =
        plural(cg.functions, "function", "functions") + " in " + plural(cg.modules, "module", "modules") + " walked";
    if (!cg.cycles.empty()) summary += "; " + plural(cg.cycles.size(), "cycle", "cycles") + " in the call graph";
    out.out(summary);
  }
  print_limits(out, cg);
  // Left out on evidence the user should be able to check: always listed.
  if (!cg.ruled_out.empty())
    out.out(plural(cg.ruled_out.size(), "call", "calls") +
            " left out: the literal arguments of every call reaching them rule their branch out:");
  for (auto& r : cg.ruled_out)
    out.out(fmt::format("    {}:{}  {}  {}  ({})", util::printable(r.file), r.line, r.function, r.call, r.why));
  print_unused(out, unused);
  if (!g.verbose) return;
  print_unfollowed(out, cg);
  for (auto& cyc : cg.cycles) out.out("cycle: " + util::join(cyc, " -> ") + " -> " + cyc.front());
  print_ignored(out, found);
}

int run_calls(const GlobalOptions& g, const AuditOptions& o, const audit::RuleSet& rules,
              const std::vector<audit::IgnoreEntry>& ignores) {
  size_t colon = o.entry.find(':');
  if (colon == 0 || (colon != std::string::npos && colon + 1 == o.entry.size()))
    throw Error("entry `" + o.entry + "` must be MODULE or MODULE:FUNCTION, e.g. flashinfer.fp4_quantization:fp4_quantize",
                Exit::usage);
  // MODULE alone: its top level is the entry (what `import MODULE` or running it does).
  audit::WalkOptions w{o.entry.substr(0, colon), colon == std::string::npos ? "" : o.entry.substr(colon + 1), o.depth};
  Env env = open_env(g);
  Output out(g);
  CalibratedRules cr = with_calibration(rules, env.session.get());
  engine::CallAudit a = engine::audit_calls(*env.session, cr.rules, w, o.suggest);
  const audit::CallGraph& cg = a.graph;

  if (o.suggest) {
    // Every suggested edit is torch.compiler.disable: an `import torch` the environment
    // cannot run would break `import` of the patched modules.
    if (!env.host->importable({"torch"})[0]) {
      out.err("sitepatch: nothing to suggest: torch is not importable in " + env.session->env.prefix +
              ", and each suggested edit (torch.compiler.disable) needs it; audit the environment the model runs in");
      return int(Exit::failed);
    }
    std::string recipe = suggest_recipe(a, o.entry);
    if (recipe.empty()) {
      out.err("sitepatch: no chain from " + o.entry + " reaches a flagged operation in its own distribution; nothing to suggest");
      return int(Exit::ok);
    }
    std::cout << recipe;
    return int(Exit::ok);
  }
  if (!o.callgraph.empty()) {
    write_output_file(o.callgraph,
                      callgraph_document(o.entry, cg).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                      "--callgraph", "call graph");
    if (!out.quiet() && !out.json() && o.format == "text") out.err("call graph of " + o.entry + " -> " + o.callgraph);
  }
  std::vector<Reported> found = reported_chains(cg, ignores);
  auto unused = unused_ignores(found, ignores, audited_by(cg));
  size_t ignored = std::count_if(found.begin(), found.end(), [](const Reported& f) { return f.ignored; });
  bool incomplete = !cg.unresolved.empty() || cg.beyond_depth > 0;
  std::string gaps =
      incomplete ? plural(cg.unresolved.size() + cg.beyond_depth, "call", "calls") + " could not be followed" : "";
  if (o.format == "sarif") {
    std::cout << sarif(found, rules, site_bases(env.session->env.site_dirs), cg.unresolved, unused)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else if (out.json()) {
    auto doc = walk_document(o.entry, cg, found, walk_conclusion(o.entry, cg, found.size() - ignored, ignored, false),
                             unused);
    doc["calibration"] = cr.json();
    if (o.triage.summary) doc["summary"] = summary_json(found);
    out.document(doc);
  } else if (o.triage.summary) {
    print_summary(out, found);
    out.out(walk_conclusion(o.entry, cg, found.size() - ignored, ignored, false));
  } else {
    print_walk(out, g, o.entry, cg, found, unused);
    if (!out.quiet() && !cr.note().empty()) out.err(cr.note());
  }
  return finish(out, o, found, gaps, unused.size());
}

// What the conclusion counts: reported calls, the functions and files making them.
ScanCounts scan_counts(const engine::ScanResult& r, const std::vector<audit::IgnoreEntry>& ignores) {
  ScanCounts counts;
  std::string last_fn, last_file;
  for (auto& f : r.files)
    for (auto& x : f.findings) {
      if (audit::ignored_by(ignores, x.rule->id, {x.function.empty() ? f.module : f.module + ":" + x.function},
                            f.rel, x.line)) {
        ++counts.ignored;
        continue;
      }
      ++counts.calls;
      if (f.rel != last_file) ++counts.files;
      last_file = f.rel;
      if (x.function.empty()) ++counts.top;
      else if (f.rel + x.function + "@" + std::to_string(x.function_line) != last_fn) {
        ++counts.functions;
        last_fn = f.rel + x.function + "@" + std::to_string(x.function_line);
      }
    }
  return counts;
}

int run_scan(const GlobalOptions& g, const AuditOptions& o, const audit::RuleSet& rules,
             const std::vector<audit::IgnoreEntry>& ignores) {
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
  CalibratedRules cr = with_calibration(rules, env.session.get());
  auto r = engine::audit_scan(*h, env.session.get(), cr.rules, scope, what, progress_bar(g, o));
  std::vector<Reported> found = reported_calls(r, ignores);

  ScanCounts counts = scan_counts(r, ignores);
  auto unused = unused_ignores(found, ignores, audited_by(r));
  std::string gaps = r.files_with_syntax_errors
                         ? plural(r.files_with_syntax_errors, "file", "files") + " could not be parsed completely"
                         : "";
  if (o.format == "sarif") {
    std::vector<SarifBase> bases = scope == engine::ScanScope::path ? std::vector<SarifBase>{{"ROOT", what}}
                                                                    : site_bases(env.session->env.site_dirs);
    // As print_document does: a file in another encoding gets U+FFFD, not an internal error.
    std::cout << sarif(found, rules, bases, {}, unused).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else if (out.json()) {
    auto doc = scan_document(r, found, counts, unused);
    doc["calibration"] = cr.json();
    if (o.triage.summary) doc["summary"] = summary_json(found);
    out.document(doc);
  } else if (o.triage.summary) {
    print_summary(out, found);
    out.out(scan_conclusion(r, counts));
  } else {
    for (auto& f : found)
      if (!f.ignored)
        // The file's name is the folder's, whoever made it: escaped for the terminal.
        out.out(fmt::format("{}:{}:{}: {}: {}: {} [{}] {}", util::printable(f.file), f.line, f.column,
                            audit::to_string(f.rule->severity),
                            util::printable(f.function.find(':') == std::string::npos ? f.function + " (module level)"
                                                                                      : f.function),
                            f.operation, f.rule->category, rule_tag(*f.rule)));
    if (!out.quiet() || counts.calls == 0) out.out(scan_conclusion(r, counts));
    if (!out.quiet()) print_unused(out, unused);
    if (g.verbose && !out.quiet()) print_ignored(out, found);
    if (!out.quiet() && !cr.note().empty()) out.err(cr.note());
  }
  return finish(out, o, found, gaps, unused.size());
}

}  // namespace

Runner register_audit(CLI::App& app, const GlobalOptions& g) {
  auto o = std::make_shared<AuditOptions>();
  app.add_option("entry", o->entry,
                 "MODULE:FUNCTION to walk the calls from (FUNCTION may be Class.method), or MODULE: its top level")
      ->type_name("MODULE[:FUNCTION]");
  app.add_option("--depth", o->depth, "Follow chains of at most N calls (default: no limit)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  app.add_option("--package", o->package, "Scan every module of an installed distribution")->type_name("DIST");
  app.add_option("--module", o->module, "Scan a module, or a package and everything under it")
      ->type_name("PREFIX");
  app.add_flag("--all", o->all, "Scan every installed distribution");
  app.add_option("--path", o->path, "Scan every .py file under a folder (no environment needed)")->type_name("DIR");
  // One file per --rules, so a rules file never swallows the entry after it.
  app.add_option("--rules", o->rules, "A rules file to add (YAML: rules: [{id, match, category, message, severity, probe, doc}]); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_flag("--no-default-rules", o->no_default_rules, "Use only the --rules files, not the shipped set");
  app.add_flag("--suggest", o->suggest,
               "Print a recipe adding @torch.compiler.disable to the nearest function of each chain\n"
               "that the entry's distribution owns");
  app.add_option("--fail-on", o->fail_on,
                 "Exit 3 when a finding of this severity or higher is reported (not ignored)")
      ->check(CLI::IsMember({"error", "warning", "info"}))
      ->type_name("SEVERITY");
  app.add_flag("--strict", o->strict,
               "Exit 3 also when the answer is incomplete: calls that could not be followed\n"
               "(MODULE:FUNCTION) or files that did not parse completely (scans); or when an\n"
               "--ignore entry accepted no finding in the code this run read");
  app.add_option("--ignore", o->ignore,
                 "An ignore file (YAML: ignore: [{rule, function: MODULE:FUNCTION | at: FILE:LINE, reason}]);\n"
                 "repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_option("--callgraph", o->callgraph,
                 "MODULE:FUNCTION: also write the walked call graph to FILE as JSON (each function ->\n"
                 "the functions it calls, its flagged operations and unfollowed calls, with lines)")
      ->type_name("FILE");
  app.add_option("--min-severity", o->triage.min_severity, "Only the rules of this severity or higher")
      ->check(CLI::IsMember({"error", "warning", "info"}))
      ->type_name("SEVERITY");
  app.add_option("--category", o->triage.categories, "Only the rules of this category (process, file-io, ...); repeatable")
      ->type_name("CATEGORY")
      ->allow_extra_args(false);
  app.add_option("--rule", o->triage.rule_ids, "Only this rule ('sitepatch rules' lists them); repeatable")
      ->type_name("ID")
      ->allow_extra_args(false);
  app.add_flag("--summary", o->triage.summary,
               "A count per rule and per top-level package, with the worst finding of each, instead of\n"
               "every chain or call (--json: `summary`)");
  app.add_option("--format", o->format, "text (default), json (as --json), or sarif (SARIF 2.1.0)")
      ->check(CLI::IsMember({"text", "json", "sarif"}))
      ->type_name("FORMAT");
  app.footer(
      "Without an entry, --package, --module, --all or --path lists every function that directly\n"
      "performs a flagged operation (calls at module level are listed as such). Names are matched\n"
      "as resolved through imports: `from subprocess import Popen; Popen()` is subprocess.Popen.\n"
      "'sitepatch rules' lists the rules.\n"
      "Exit codes: 0 done (whatever was found, unless --fail-on or --strict); 1 failed; 2 bad\n"
      "usage, rules or ignore file; 3 a finding at or above --fail-on, or with --strict an\n"
      "incomplete answer or an unused ignore entry.");
  return [&g, o] {
    if (g.json && o->format == "sarif") throw Error("--json and --format sarif: choose one", Exit::usage);
    int modes = !o->entry.empty() + !o->package.empty() + !o->module.empty() + o->all + !o->path.empty();
    if (modes != 1)
      throw Error("audit needs exactly one of MODULE[:FUNCTION], --package, --module, --all, --path", Exit::usage);
    if (o->depth && o->entry.empty()) throw Error("--depth applies to MODULE[:FUNCTION] only", Exit::usage);
    if (o->suggest && o->entry.empty()) throw Error("--suggest applies to MODULE[:FUNCTION] only", Exit::usage);
    if (!o->callgraph.empty() && o->entry.empty())
      throw Error("--callgraph applies to MODULE[:FUNCTION] only (a scan follows no calls)", Exit::usage);
    check_output_file(o->callgraph, "--callgraph", "call graph");  // before the walk, as every output file
    if (o->suggest && o->format != "text") throw Error("--suggest prints a recipe; it takes no --format", Exit::usage);
    if (o->suggest && g.json) throw Error("--json and --suggest: --suggest prints a recipe, not a document", Exit::usage);
    audit::RuleSet rules = load_rules(o->rules, !o->no_default_rules);
    auto ignores = load_ignores(o->ignore, rules);
    rules = triaged(rules, o->triage, ignores);  // before the walk: fewer rules, less to match
    GlobalOptions local = g;
    local.json = g.json || o->format == "json";
    return o->entry.empty() ? run_scan(local, *o, rules, ignores) : run_calls(local, *o, rules, ignores);
  };
}

}  // namespace sitepatch::cli
