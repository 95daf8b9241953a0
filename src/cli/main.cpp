// sitepatch: parse the command line, run one subcommand, turn errors into messages
// and exit codes (caught once, here).
#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <tree_sitter/api.h>

#include "commands.hpp"
#include "guides.hpp"
#include "pager.hpp"
#include "sitepatch_build_info.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/store/warm_up.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace {

using namespace sitepatch;
using namespace sitepatch::cli;

struct Command {
  const char* name;
  const char* description;
  Register reg;
};

// Every subcommand, in the order --help lists them. Adding one: write cmd_<name>.cpp
// with register_<name>(), declare it in commands.hpp, add a row here.
const Command kCommands[] = {
    {"plan", "Show the diff the recipes would make, and each edit's state; writes nothing",
     register_plan},
    {"apply", "Apply recipes: all edits or none, originals saved in the history first",
     register_apply},
    {"reapply", "After an upgrade or a reinstall: apply patches again from the recipes the history recorded",
     register_reapply},
    {"sync", "Bring the environment to exactly a set of recipes (a patches/ folder): apply, reapply, roll back",
     register_sync},
    {"list", "List the applied patches", register_list},
    {"status", "After an upgrade: which patches need reapplying, and the command for each (exit 3 if any)",
     register_status},
    {"verify", "Check each patched file against the history (exit 3 if any is not intact)",
     register_verify},
    {"rollback", "Undo applied patches, keeping other recipes' edits in shared files",
     register_rollback},
    {"adopt", "Record a patch's files as others changed them as its applied state (status green again)",
     register_adopt},
    {"refresh", "Fold a hand change on top of an applied patch into its recipe (quilt's refresh)",
     register_refresh},
    {"wheel", "Write the patched wheel: recipes applied to a wheel's files, for an image or a private index",
     register_wheel},
    {"edit", "Before editing a distribution by hand: save pip's bytes in the history (or --copy its sources)",
     register_edit},
    {"capture", "Turn hand edits of a distribution into a recipe of named edits, recorded as applied",
     register_capture},
    {"log", "Show the history of applies and rollbacks (-p: with each one's diff)", register_log},
    {"show", "Print an applied patch as a unified diff (git apply -R reverses it), or a history commit",
     register_show},
    {"audit", "Find the functions that reach operations dynamo cannot trace (rules decide which)",
     register_audit},
    {"try", "Run a command with recipes in effect for every Python it starts; writes nothing",
     register_try},
    {"rules", "List the rules audit uses", register_rules},
    {"explain", "Read a dynamo log: each graph break's library chain, a recipe fixing it, what is left (exit 3 if any)",
     register_explain},
    // Hidden (its group is ""): what the shell completions ask for ids and distribution names.
    {"__complete", "", register_complete},
};

// The first word that is neither an option nor an option's value, or "". An option
// it does not know stops it: whether a value follows is then unknown, and CLI11 names
// the option (`--colour never list` is not a command `never`).
std::string command_word(const CLI::App& app, int argc, char** argv) {
  // The global options, read off the app so the list cannot drift.
  std::set<std::string> takes_value, flags;
  for (const CLI::Option* o : app.get_options()) {
    auto& into = o->get_items_expected_min() <= 0 ? flags : takes_value;
    for (auto& n : o->get_lnames()) into.insert("--" + n);
    for (auto& n : o->get_snames()) into.insert("-" + n);
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return i + 1 < argc ? argv[i + 1] : "";
    if (takes_value.count(a)) {
      ++i;
      continue;
    }
    if (a.empty() || a[0] != '-') return a;
    std::string name = a.substr(0, a.find('='));
    bool short_flags = a.size() > 1 && a[1] != '-' && a.find_first_not_of(a[1], 1) == std::string::npos;  // -vv
    if (!flags.count(name) && !takes_value.count(name) && !short_flags) return "";
  }
  return "";
}

// Every option name a command line may use here: the global ones and `sub`'s.
std::vector<std::string> option_names(const CLI::App& app, const CLI::App* sub) {
  std::vector<std::string> out;
  for (const CLI::App* a : {&app, sub}) {
    if (!a) continue;
    for (const CLI::Option* o : a->get_options())
      for (auto& n : o->get_lnames()) out.push_back("--" + n);
  }
  return out;
}

// CLI11's "The following argument was not expected: --dryrun" with what was meant:
// the nearest option here, else the commands that have it (`plan --dry-run`).
std::string suggest_option(const std::string& what, const CLI::App& app, const CLI::App* sub) {
  std::string out;
  size_t at = what.find(": ");
  if (at == std::string::npos || what.find("not expected") == std::string::npos) return out;
  for (auto& word : util::split(what.substr(at + 2), ' ')) {
    if (word.rfind("--", 0) != 0) continue;
    std::string name = word.substr(0, word.find('='));
    auto near = util::nearest(name, option_names(app, sub), 1);
    if (!near.empty()) {
      out += "; did you mean `" + near[0] + "`?";
      continue;
    }
    std::vector<std::string> owners;
    std::string meant;
    for (const CLI::App* other : app.get_subcommands([](const CLI::App*) { return true; })) {
      auto there = util::nearest(name, option_names(*other, nullptr), 1);
      if (other == sub || there.empty() || (!meant.empty() && there[0] != meant)) continue;
      meant = there[0];
      owners.push_back(other->get_name());
    }
    if (!owners.empty()) {
      std::string last = owners.back();
      owners.pop_back();
      std::string names = owners.empty() ? last : util::join(owners, ", ") + " and " + last;
      out += "; `" + meant + "` is an option of " + names + (sub ? ", not of " + sub->get_name() : "");
    }
  }
  return out;
}

// The global options, for every subcommand's --help: they work after the command too.
std::string global_options_text(const CLI::App& app) {
  std::string out = "Global options (before or after the command):\n";
  for (const CLI::Option* o : app.get_options()) {
    std::string names = o->get_name(false, true);
    if (names.find("help") != std::string::npos || names.find("version") != std::string::npos) continue;
    if (o->get_items_expected_min() > 0) names += " " + o->get_type_name();
    out += "  " + names + (names.size() < 28 ? std::string(28 - names.size(), ' ') : "\n" + std::string(30, ' ')) +
           o->get_description() + "\n";
  }
  return out;
}

// Whether the command line asks for JSON, read before CLI11 parses it: a command line
// CLI11 refuses still gets its error as a document. --json is global, so it counts
// before or after the command; audit's `--format json` is --json too.
bool json_asked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return false;
    if (a == "--json" || a == "--format=json" || (a == "--format" && i + 1 < argc && std::string(argv[i + 1]) == "json"))
      return true;
  }
  return false;
}

// What went wrong, for a script to branch on: the command line, a recipe, the run.
const char* error_kind(Exit code) {
  switch (code) {
    case Exit::usage: return "usage";
    case Exit::partial: return "partial";
    default: return "failed";
  }
}

// The message on stderr, as without --json (a person watching a script still reads
// it there), and with --json the same as one document on stdout.
int report(bool json, const std::string& kind, const std::string& message, Exit code,
           const nlohmann::json& diagnostics = nullptr) {
  std::cerr << "sitepatch: error: " << message << "\n";
  if (json)
    print_document({{"ok", false},
                    {"exit_code", int(code)},
                    {"error", {{"kind", kind}, {"message", message}, {"diagnostics", diagnostics}}}});
  return int(code);
}

// --version --json: the same facts as the text, one field each.
nlohmann::json version_document() {
  return {{"schema", 1},
          {"ok", true},
          {"version", SITEPATCH_VERSION},
          {"commit", SITEPATCH_COMMIT},
          {"libgit2", SITEPATCH_LIBGIT2},
          {"tree_sitter_language_abi", TREE_SITTER_LANGUAGE_VERSION},
          {"tree_sitter_python", SITEPATCH_GRAMMAR}};
}

// The options every command takes, and the top-level help's version and footer.
void add_global_options(CLI::App& app, GlobalOptions& g) {
  // A bug report needs the commit and what it was built against, as `git version --build-options` says.
  const nlohmann::json v = version_document();  // one source for the text and --json
  app.set_version_flag("--version", "sitepatch " + v["version"].get<std::string>() + " (commit " +
                                        v["commit"].get<std::string>() + ")\nlibgit2 " +
                                        v["libgit2"].get<std::string>() + ", tree-sitter language ABI " +
                                        std::to_string(v["tree_sitter_language_abi"].get<int>()) +
                                        ", tree-sitter-python " + v["tree_sitter_python"].get<std::string>());
  app.fallthrough();
  app.require_subcommand(1, 1);
  app.add_option("--venv", g.venv,
                 "Environment root or its Python executable (default: $VIRTUAL_ENV, else $CONDA_PREFIX unless it is conda's base, else the nearest .venv above the current folder)")
      ->type_name("PATH");
  app.add_option("--host", g.host,
                 "Patch an environment on another machine, [user@]host[:port], over ssh")
      ->type_name("[USER@]HOST[:PORT]");
  app.add_option("--ssh-command", g.ssh_command,
                 "The ssh client and its options, run by /bin/sh -c as git runs GIT_SSH_COMMAND, e.g. \"ssh -i $HOME/.ssh/k\" (default: $SITEPATCH_SSH, else ssh)")
      ->type_name("CMD");
  app.add_option("--state-dir", g.state_dir,
                 "Where the history lives (default: <prefix>/.sitepatch)")
      ->type_name("DIR");
  app.add_flag("--json", g.json, "Print the result as one JSON document on stdout");
  app.add_flag("--no-pager", g.no_pager,
               "Print diffs directly (default on a terminal: through $SITEPATCH_PAGER, else $PAGER, else less -FRX; an empty value or cat means none)");
  app.add_option("--color,--colour", g.color,
                 "Colour: auto (on a terminal, unless NO_COLOR is set or TERM=dumb; anywhere with CLICOLOR_FORCE), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN");
  app.add_option("--lock-timeout", g.lock_timeout,
                 "Seconds to wait for another sitepatch writing to the same environment (default 30)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("SECONDS");
  CLI::Option* verbose = app.add_flag(
      "-v,--verbose", g.verbose, "Say more; -vv adds debug output, each line with the milliseconds since the one before; -vvv each remote round trip");
  app.add_flag("-q,--quiet", g.quiet, "Print only results and errors")->excludes(verbose);
  app.footer(
      "Exit codes: 0 done; 1 failed, nothing changed; 2 bad usage or invalid recipe;\n"
      "3 verify (or status) found a patch not intact, audit a finding at or above --fail-on, or\n"
      "explain a graph break inside a library;\n"
      "4 a write failed part way and could not be put back (the message names each file's\n"
      "state and the fixing command).\n"
      "Run 'sitepatch help COMMAND' (or 'sitepatch COMMAND --help') for a command's options, and\n"
      "'sitepatch help --guide [TOPIC]' for a guide (upgrades, explain, audit, ...).");
}

// `sitepatch help plan` is `sitepatch plan --help`, as git and cargo answer it: rewrites
// `args` so and returns the command asked about ("" for the top-level help).
std::string help_as_flag(std::vector<std::string>& args) {
  auto at = std::find(args.begin() + 1, args.end(), "help");
  std::string topic = at + 1 != args.end() ? *(at + 1) : "";
  args.erase(at, at + 1 + (topic.empty() ? 0 : 1));
  if (!topic.empty()) args.push_back(topic);
  args.push_back("--help");
  return topic;
}

// An unknown command gets a suggestion, as ninja answers an unknown tool.
bool known_command(const std::string& word, bool json) {
  std::vector<std::string> names;
  for (const auto& c : kCommands) names.push_back(c.name);
  if (std::find(names.begin(), names.end(), word) != names.end()) return true;
  auto near = util::nearest(word, names, 1);
  report(json, "usage",
         "unknown command `" + word + "`" + (near.empty() ? "" : "; did you mean `" + near[0] + "`?"), Exit::usage);
  std::cerr << "Run 'sitepatch --help' for the commands.\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  GlobalOptions g;
  CLI::App app{
      "sitepatch patches installed Python packages with edits located by syntax tree,\n"
      "previewed as a diff, recorded in a git history, verifiable and reversible.",
      "sitepatch"};  // the name `Usage:` shows, and each command's `Usage: sitepatch NAME`
  add_global_options(app, g);

  std::map<CLI::App*, Runner> runners;
  for (const auto& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    runners[sub] = c.reg(*sub, g);
  }
  const std::string globals = global_options_text(app);
  for (auto& [sub, _] : runners) sub->footer(globals);

  std::string word = command_word(app, argc, argv);
  std::vector<std::string> args(argv, argv + argc);
  if (word == "help") {
    // `help --guide [TOPIC]`: a guide the binary carries, as `git help` opens a manual.
    auto at = std::find(args.begin() + 1, args.end(), "help");
    if (at + 1 != args.end() && *(at + 1) == "--guide") {
      g.no_pager = std::find(args.begin(), args.end(), "--no-pager") != args.end();
      try {
        return show_guide(g, at + 2 != args.end() ? *(at + 2) : "");
      } catch (const Error& e) {
        return report(json_asked(argc, argv), "usage", e.what(), e.code());
      }
    }
    word = help_as_flag(args);
  }
  // `try RECIPE... -- CMD ARGS...`: the command is the user's, every word of it, so it
  // never reaches CLI11 (which would take it for more recipes).
  if (word == "try") {
    auto at = std::find(std::find(args.begin(), args.end(), "try"), args.end(), "--");
    if (at != args.end()) {
      trailing_command().assign(at + 1, args.end());
      args.erase(at, args.end());
    }
  }
  const bool json = json_asked(argc, argv);
  if (!word.empty() && !known_command(word, json)) return int(Exit::usage);

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 takes them last first
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      // A script asking which build it talks to gets a document, as from every command.
      if (json && dynamic_cast<const CLI::CallForVersion*>(&e)) {
        std::cout << version_document().dump(2) << "\n";
        return 0;
      }
      return app.exit(e);
    }
    const CLI::App* sub = nullptr;
    for (auto& [s, _] : runners)
      if (s->get_name() == word) sub = s;
    report(json, "usage", e.what() + suggest_option(e.what(), app, sub), Exit::usage);
    std::cerr << "Run 'sitepatch " << (sub ? "help " + word : std::string("--help")) << "' for usage.\n";
    return int(Exit::usage);
  }

  auto logger = spdlog::stderr_color_mt("sitepatch");
  spdlog::set_default_logger(logger);
  // -vv adds the milliseconds since the previous line, to see where the time goes.
  spdlog::set_pattern(g.verbose >= 2 ? "sitepatch: [+%o ms] %v" : "sitepatch: %v");
  spdlog::set_level(g.verbose >= 3   ? spdlog::level::trace
                    : g.verbose >= 2 ? spdlog::level::debug
                    : g.verbose  ? spdlog::level::info
                                 : spdlog::level::warn);

  // After the last message (an error included): the user reads the pager to the end.
  struct PagerEnd {
    ~PagerEnd() { end_pager(); }
  } pager_end;
  // Before exit's handlers run (store/warm_up.hpp).
  struct Settle {
    ~Settle() { store::settle(); }
  } settle;
  try {
    CLI::App* sub = app.get_subcommands().front();
    return runners.at(sub)();
  } catch (const recipe::RecipeError& e) {
    // A problem of the file as a whole (it cannot be read) has no line: null, not 0.
    auto known = [](int n) { return n > 0 ? nlohmann::json(n) : nlohmann::json(); };
    nlohmann::json diags = nlohmann::json::array();
    for (auto& d : e.diagnostics())
      diags.push_back({{"file", d.file}, {"line", known(d.mark.line)}, {"column", known(d.mark.column)},
                       {"message", d.message}});
    std::string msg = std::string("invalid recipe\n") + e.what();
    return report(g.json || json, "recipe", msg, e.code(), diags);
  } catch (const Error& e) {
    return report(g.json || json, error_kind(e.code()), e.what(), e.code());
  } catch (const std::exception& e) {
    return report(g.json || json, "internal", std::string("internal error: ") + e.what(), Exit::failed);
  }
}
