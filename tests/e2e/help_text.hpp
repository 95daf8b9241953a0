#pragma once
// What the built binary's --help says: the commands, each command's options, and the
// values of those that take a fixed set. The man page and completion tests hold their
// files to it, so a command or option added to the binary fails them until the man
// page and the three completions name it too.
#include <set>
#include <string>
#include <vector>

namespace e2e {

struct HelpOption {
  std::vector<std::string> names;   // "-n", "--dry-run"
  std::vector<std::string> values;  // a fixed set ("auto", "always", "never"), else empty
  bool takes_value = false;          // "--venv PATH", not "--json"
};

struct CommandHelp {
  std::string name;
  std::vector<HelpOption> own;  // its "Options:" but -h/--help, which every command has
};

struct CliHelp {
  std::vector<HelpOption> global;     // the top-level "Options:": -h, --help, --version too
  std::vector<CommandHelp> commands;  // in the order --help lists them
  /// The command names, in that order.
  std::vector<std::string> command_names() const;
  /// Every option (and value set) the command line knows, global ones first.
  std::vector<HelpOption> all_options() const;
};

/// `sitepatch --help` and every `sitepatch COMMAND --help`, parsed once.
const CliHelp& cli_help();

/// The option lines of one section of a help text ("Options:" up to the next blank line).
std::vector<HelpOption> help_options(const std::string& text, const std::string& section);

/// Every name of these options.
std::set<std::string> names_of(const std::vector<HelpOption>& options);

/// Catch checks that `here` (a man page's, a completion's) names what `help` does: the
/// names --help prints that are missing here, then those here that --help does not
/// know, each shown by name when the check fails.
void check_same_names(const std::set<std::string>& here, const std::set<std::string>& help);

}  // namespace e2e
