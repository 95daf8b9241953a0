#include "help_text.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "support/fixture.hpp"

namespace e2e {
namespace {

std::string help_of(const std::vector<std::string>& args) {
  auto r = testsupport::run_sitepatch(args);
  if (r.status != 0) throw std::runtime_error("sitepatch --help exited " + std::to_string(r.status) + ": " + r.err);
  return r.out;
}

// The lines of `section` (a line starting with it) up to the next blank line.
std::vector<std::string> section_lines(const std::string& text, const std::string& section) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (inside && line.empty()) break;
    if (inside) out.push_back(line);
    if (line.rfind(section, 0) == 0) inside = true;
  }
  if (!inside) throw std::runtime_error("no \"" + section + "\" in the help text:\n" + text);
  return out;
}

CliHelp parse() {
  CliHelp h;
  std::string top = help_of({"--help"});
  h.global = help_options(top, "Options:");
  // "  plan    Show the diff ...": a command line starts with two spaces and its name.
  static const std::regex command_line(R"(^  ([a-z][a-z0-9-]*)( .*)?$)");
  for (auto& line : section_lines(top, "Subcommands:")) {
    std::smatch m;
    if (!std::regex_match(line, m, command_line)) continue;
    CommandHelp c{m[1], {}};
    for (auto& o : help_options(help_of({c.name, "--help"}), "Options:"))
      if (o.names != std::vector<std::string>{"-h", "--help"}) c.own.push_back(o);
    h.commands.push_back(c);
  }
  if (h.commands.empty()) throw std::runtime_error("no commands in sitepatch --help:\n" + top);
  return h;
}

}  // namespace

std::vector<HelpOption> help_options(const std::string& text, const std::string& section) {
  // "  --color,--colour WHEN:{auto,always,never}": two spaces, the names, then the value's
  // type; a description's continuation line is indented further.
  static const std::regex option_line(R"(^  (-[^ ]+)(.*)$)");
  static const std::regex value_set(R"(:\{([^}]*)\})");
  std::vector<HelpOption> out;
  for (auto& line : section_lines(text, section)) {
    std::smatch m;
    if (!std::regex_match(line, m, option_line)) continue;
    HelpOption o;
    std::stringstream names(m[1].str());
    for (std::string n; std::getline(names, n, ',');) o.names.push_back(n);
    std::string rest = m[2];
    // The value's type follows the names after one space: PATH, [USER@]HOST[:PORT], WHEN:{...}.
    static const std::regex value_type(R"(^ ([A-Z\[][^ ]*)( |$))");
    std::smatch t;
    o.takes_value = std::regex_search(rest, t, value_type) && t[1] != "Excludes:";
    std::smatch v;
    if (std::regex_search(rest, v, value_set)) {
      std::stringstream values(v[1].str());
      for (std::string x; std::getline(values, x, ',');) o.values.push_back(x);
    }
    out.push_back(o);
  }
  return out;
}

std::set<std::string> names_of(const std::vector<HelpOption>& options) {
  std::set<std::string> out;
  for (auto& o : options) out.insert(o.names.begin(), o.names.end());
  return out;
}

void check_same_names(const std::set<std::string>& here, const std::set<std::string>& help) {
  std::set<std::string> missing, unknown;
  std::set_difference(help.begin(), help.end(), here.begin(), here.end(), std::inserter(missing, missing.end()));
  std::set_difference(here.begin(), here.end(), help.begin(), help.end(), std::inserter(unknown, unknown.end()));
  CHECK(missing == std::set<std::string>{});  // --help prints them; this file does not name them
  CHECK(unknown == std::set<std::string>{});  // this file names them; --help does not
}

std::vector<std::string> CliHelp::command_names() const {
  std::vector<std::string> out;
  for (auto& c : commands) out.push_back(c.name);
  return out;
}

std::vector<HelpOption> CliHelp::all_options() const {
  std::vector<HelpOption> out = global;
  for (auto& c : commands) out.insert(out.end(), c.own.begin(), c.own.end());
  return out;
}

const CliHelp& cli_help() {
  static const CliHelp h = parse();
  return h;
}

}  // namespace e2e
