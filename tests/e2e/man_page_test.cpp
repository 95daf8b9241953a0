// sitepatch(1), docs/man/sitepatch.1, against what the binary says: every command and
// option its --help prints is in the man page, and the man page names nothing else.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "help_text.hpp"
#include "support/fixture.hpp"

namespace fs = std::filesystem;

namespace {

// One .TP entry's tag line: the options it names and the values it lists (a|b|c).
struct Tag {
  std::set<std::string> names;
  std::set<std::string> values;
  std::string text;
};

struct ManPage {
  std::map<std::string, std::string> sections;         // .SH NAME -> its lines, as written
  std::vector<Tag> options;                             // .SH OPTIONS: the global ones
  std::vector<std::string> commands;                    // .SS under .SH COMMANDS, in order
  std::map<std::string, std::vector<Tag>> command_tags; // each command's options
  std::map<std::string, std::vector<std::string>> plain_tags;  // ENVIRONMENT, EXIT STATUS: .TP's .B word
};

// The text a reader sees: font changes dropped, \- a hyphen, quotes of a macro's argument gone.
std::string unroff(std::string s) {
  s = std::regex_replace(s, std::regex(R"(\\f[BIRP])"), "");
  s = std::regex_replace(s, std::regex(R"(\\-)"), "-");
  s = std::regex_replace(s, std::regex(R"(\\e)"), "\\");
  return s;
}

Tag read_tag(const std::string& line) {
  Tag t;
  t.text = unroff(line);
  static const std::regex option(R"((^|[\s,\[|(])(--?[A-Za-z][A-Za-z0-9-]*))");
  for (std::sregex_iterator i(t.text.begin(), t.text.end(), option), end; i != end; ++i) t.names.insert((*i)[2]);
  static const std::regex set(R"((^|\s)([a-z]+(\|[a-z]+)+)($|\s))");
  std::smatch m;
  if (std::regex_search(t.text, m, set)) {
    std::stringstream values(m[2].str());
    for (std::string v; std::getline(values, v, '|');) t.values.insert(v);
  }
  return t;
}

ManPage read_man_page(const std::string& path) {
  ManPage man;
  std::istringstream in(testsupport::slurp(path));
  std::string line, section, command;
  bool tag_next = false;
  while (std::getline(in, line)) {
    if (line.rfind(".\\\"", 0) == 0) continue;
    if (line.rfind(".SH ", 0) == 0) {
      section = unroff(line.substr(4));
      section.erase(std::remove(section.begin(), section.end(), '"'), section.end());
      command.clear();
      continue;
    }
    man.sections[section] += line + "\n";
    if (section == "COMMANDS" && line.rfind(".SS ", 0) == 0) {
      std::string heading = unroff(line.substr(4));
      heading.erase(std::remove(heading.begin(), heading.end(), '"'), heading.end());
      command = heading.substr(0, heading.find(' '));
      man.commands.push_back(command);
      man.command_tags[command];
      continue;
    }
    if (line == ".TP") {
      tag_next = true;
      continue;
    }
    if (!tag_next) continue;
    tag_next = false;
    if (section == "OPTIONS") man.options.push_back(read_tag(line));
    else if (section == "COMMANDS" && !command.empty()) man.command_tags[command].push_back(read_tag(line));
    else if (line.rfind(".B ", 0) == 0) man.plain_tags[section].push_back(unroff(line.substr(3)));
  }
  return man;
}

std::set<std::string> names_of(const std::vector<Tag>& tags) {
  std::set<std::string> out;
  for (auto& t : tags) out.insert(t.names.begin(), t.names.end());
  return out;
}

const Tag* tag_naming(const std::vector<Tag>& tags, const std::string& name) {
  for (auto& t : tags)
    if (t.names.count(name)) return &t;
  return nullptr;
}

const ManPage& man_page() {
  static const ManPage man = read_man_page(std::string(SITEPATCH_SOURCE_DIR) + "/docs/man/sitepatch.1");
  return man;
}

// Every variable the code reads: getenv("X"), env_choice's variable("X"), and the
// agent's os.environ.get("X").
std::set<std::string> variables_read() {
  std::set<std::string> out;
  static const std::regex read(R"((getenv|variable|environ\.get)\(\s*\\?"([A-Z][A-Z0-9_]*)\\?")");
  for (auto& e : fs::recursive_directory_iterator(std::string(SITEPATCH_SOURCE_DIR) + "/src")) {
    if (!e.is_regular_file()) continue;
    std::string text = testsupport::slurp(e.path().string());
    for (std::sregex_iterator i(text.begin(), text.end(), read), end; i != end; ++i) out.insert((*i)[2]);
  }
  return out;
}

}  // namespace

TEST_CASE("man page: a section per command, in the order --help lists them", "[e2e][install][man]") {
  CHECK(man_page().commands == e2e::cli_help().command_names());
}

TEST_CASE("man page: OPTIONS names exactly the global options --help prints", "[e2e][install][man]") {
  e2e::check_same_names(names_of(man_page().options), e2e::names_of(e2e::cli_help().global));
}

TEST_CASE("man page: each command's options are exactly those its --help prints", "[e2e][install][man]") {
  for (auto& c : e2e::cli_help().commands) {
    INFO("sitepatch " << c.name << " --help");
    e2e::check_same_names(names_of(man_page().command_tags.at(c.name)), e2e::names_of(c.own));
  }
}

TEST_CASE("man page: an option with a fixed set of values lists each value", "[e2e][install][man]") {
  auto check = [](const std::vector<e2e::HelpOption>& options, const std::vector<Tag>& tags) {
    for (auto& o : options) {
      if (o.values.empty()) continue;
      INFO(o.names.back());
      const Tag* t = tag_naming(tags, o.names.back());
      REQUIRE(t);
      CHECK(t->values == std::set<std::string>(o.values.begin(), o.values.end()));
    }
  };
  check(e2e::cli_help().global, man_page().options);
  for (auto& c : e2e::cli_help().commands) check(c.own, man_page().command_tags.at(c.name));
}

TEST_CASE("man page: ENVIRONMENT names every variable the code reads", "[e2e][install][man]") {
  auto documented = man_page().plain_tags.at("ENVIRONMENT");
  auto read = variables_read();
  CHECK(read.count("SITEPATCH_SSH"));  // the scan itself works
  for (auto& v : read) {
    INFO(v);
    CHECK(std::find(documented.begin(), documented.end(), v) != documented.end());
  }
}

TEST_CASE("man page: EXIT STATUS lists every value of Exit", "[e2e][install][man]") {
  std::string header = testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/include/sitepatch/util/error.hpp");
  std::vector<std::string> codes;
  static const std::regex value(R"(\n\s+[a-z_]+ = ([0-9]+),)");
  for (std::sregex_iterator i(header.begin(), header.end(), value), end; i != end; ++i) codes.push_back((*i)[1]);
  REQUIRE(codes.size() >= 5);
  CHECK(man_page().plain_tags.at("EXIT STATUS") == codes);
}

TEST_CASE("man page: FILES, EXAMPLES and the help command are there, and groff reads it without a warning",
          "[e2e][install][man]") {
  CHECK(man_page().sections.count("FILES"));
  CHECK(man_page().sections.count("EXAMPLES"));
  CHECK(man_page().sections.at("SYNOPSIS").find(".B sitepatch help") != std::string::npos);
  auto groff = sitepatch::util::run(
      {"groff", "-ww", "-man", "-z", std::string(SITEPATCH_SOURCE_DIR) + "/docs/man/sitepatch.1"});
  CHECK(groff.status == 0);
  CHECK(groff.err.empty());
}
