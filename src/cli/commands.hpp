#pragma once
// The subcommands, one file each, registered from one table in main.cpp.
#include <CLI/CLI.hpp>

#include "context.hpp"
#include "sitepatch/audit/rules.hpp"

namespace sitepatch::cli {

/// A subcommand registers its options on `app` and returns the code to run after
/// parsing; the function returns the process exit code.
using Runner = std::function<int()>;
using Register = Runner (*)(CLI::App& app, const GlobalOptions& g);

Runner register_plan(CLI::App& app, const GlobalOptions& g);
Runner register_apply(CLI::App& app, const GlobalOptions& g);
Runner register_list(CLI::App& app, const GlobalOptions& g);
Runner register_verify(CLI::App& app, const GlobalOptions& g);
Runner register_rollback(CLI::App& app, const GlobalOptions& g);
Runner register_log(CLI::App& app, const GlobalOptions& g);
Runner register_show(CLI::App& app, const GlobalOptions& g);
Runner register_adopt(CLI::App& app, const GlobalOptions& g);
Runner register_status(CLI::App& app, const GlobalOptions& g);
Runner register_audit(CLI::App& app, const GlobalOptions& g);
Runner register_rules(CLI::App& app, const GlobalOptions& g);
Runner register_explain(CLI::App& app, const GlobalOptions& g);
Runner register_try(CLI::App& app, const GlobalOptions& g);
Runner register_reapply(CLI::App& app, const GlobalOptions& g);
Runner register_sync(CLI::App& app, const GlobalOptions& g);
Runner register_complete(CLI::App& app, const GlobalOptions& g);
Runner register_refresh(CLI::App& app, const GlobalOptions& g);
Runner register_capture(CLI::App& app, const GlobalOptions& g);
Runner register_edit(CLI::App& app, const GlobalOptions& g);
Runner register_wheel(CLI::App& app, const GlobalOptions& g);

/// What apply and reapply both take.
struct ApplyOptions {
  bool dry_run = false;
  bool force = false;
  bool system = false;
  bool check = false;
  std::string check_with;
};
/// Registers -n, --force, --system, --check and --check-with on `app`.
void add_apply_options(CLI::App& app, ApplyOptions& o);
/// apply's pipeline after the recipes are loaded: apply, check, report; the exit code.
/// `left_out` (reapply's) goes into the JSON document when given.
int apply_recipes(const GlobalOptions& g, Env& env, std::vector<recipe::Recipe> loaded, const ApplyOptions& o,
                  const std::vector<std::string>* left_out = nullptr);

/// What follows `--` on a `try` command line: the user's command, untouched (main sets it).
std::vector<std::string>& trailing_command();

/// Throws "refusing to read the KIND file PATH: why, ..." when a user other than the
/// caller and root could change where `path` leads (util::unsafe_path): rules and hints
/// files are code (`runs` says what runs them). A pipe passes.
void check_code_file(const std::string& path, const std::string& kind, const std::string& runs);

/// The shipped rules (unless `builtin` is false), then each rules file (refused as
/// check_code_file says); a file that cannot be read or is malformed is an error (exit 2).
audit::RuleSet load_rules(const std::vector<std::string>& files, bool builtin);

/// `rules` less those the environment's torch traces, as its kept calibration (`rules
/// --calibrate`) says; `traced` names them and `torch` the version (empty: none kept).
struct CalibratedRules {
  audit::RuleSet rules;
  std::vector<std::string> traced;
  std::string torch;
  /// "" or the line that says which rules were left out and why.
  std::string note() const;
  /// null, or {"torch": ..., "traced": [...]} for --json.
  nlohmann::json json() const;
};
CalibratedRules with_calibration(const audit::RuleSet& rules, engine::Session* session);

/// Shared by plan and apply: the diff, then one line per edit. `preview`: the edits
/// come before what the command did (apply, try), so -q leaves out those that went
/// as planned; plan's edit lines are its result and stay.
void print_plan(const Output& o, const engine::Plan& p, bool preview = false);
nlohmann::json plan_json(const engine::Plan& p);

/// Shared by log -p and show COMMIT: one entry as git prints it, then its diff.
void print_entry(const Output& o, const store::LogEntry& e);
/// An entry of log's and show's JSON; "diff" only when `diff`.
nlohmann::json entry_json(const store::LogEntry& e, bool diff);

}  // namespace sitepatch::cli
