// The bash, zsh and fish completions (completions/) against what the binary says: each
// completes every command, every option of every command and each fixed set of values
// that --help prints, and nothing else. Each shell runs its own completion: bash the
// function, fish `complete -C`, zsh its completion system in a pseudo-terminal.
#include <catch2/catch.hpp>

#include <sstream>

#include "help_text.hpp"
#include "support/fixture.hpp"

namespace {

std::string completions(const std::string& file) { return std::string(SITEPATCH_SOURCE_DIR) + "/completions/" + file; }

std::set<std::string> lines_of(const std::string& text, bool cut_at_tab = false) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (cut_at_tab) line = line.substr(0, line.find('\t'));
    if (!line.empty()) out.insert(line);
  }
  return out;
}

// What bash offers for the words typed so far (the last one is under the cursor).
std::set<std::string> bash_completes(const std::vector<std::string>& words) {
  std::vector<std::string> argv = {
      "bash", "--norc", "--noprofile", "-c",
      "source \"$1\" && shift && COMP_WORDS=(\"$@\") && COMP_CWORD=$(($# - 1)) && _sitepatch && "
      "printf '%s\\n' \"${COMPREPLY[@]}\"",
      "bash", completions("sitepatch.bash")};
  argv.insert(argv.end(), words.begin(), words.end());
  auto r = sitepatch::util::run(argv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return lines_of(r.out);
}

// What fish offers for this command line (`complete -C`), without descriptions.
std::set<std::string> fish_completes(const std::string& line) {
  auto r = sitepatch::util::run({"fish", "--no-config", "-c", "source $argv[1]; and complete -C $argv[2]",
                                 completions("sitepatch.fish"), line});
  INFO(r.err);
  REQUIRE(r.status == 0);
  return lines_of(r.out, true);
}

// What zsh's completion system offers for each command line, in order: one zsh runs
// tests/support/zsh_complete.zsh in a pseudo-terminal with completions/ first in fpath
// (one shell for all lines: compinit is most of a start). `path_first` goes before PATH.
std::vector<std::set<std::string>> zsh_complete_all(const std::vector<std::string>& lines,
                                                    const std::string& path_first = "") {
  std::vector<std::string> argv = {"zsh", "-f", std::string(SITEPATCH_SOURCE_DIR) + "/tests/support/zsh_complete.zsh",
                                   std::string(SITEPATCH_SOURCE_DIR) + "/completions"};
  if (!path_first.empty()) argv.insert(argv.begin(), {"env", "PATH=" + path_first + ":" + std::getenv("PATH")});
  argv.insert(argv.end(), lines.begin(), lines.end());
  auto r = sitepatch::util::run(argv);
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::vector<std::set<std::string>> out(1);
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line == "SPEND") out.emplace_back();
    else if (!line.empty()) out.back().insert(line);
  }
  out.pop_back();  // after the last SPEND
  REQUIRE(out.size() == lines.size());
  return out;
}

// Lines to complete, asked of one zsh when the answers are first needed.
class ZshLines {
 public:
  explicit ZshLines(std::string path_first = "") : path_first_(std::move(path_first)) {}
  /// Registers `line`; its answer is (*this)[the index returned].
  size_t add(const std::string& line) {
    lines_.push_back(line);
    return lines_.size() - 1;
  }
  const std::set<std::string>& operator[](size_t i) {
    if (answers_.empty()) answers_ = zsh_complete_all(lines_, path_first_);
    return answers_.at(i);
  }
  const std::string& line(size_t i) const { return lines_.at(i); }

 private:
  std::string path_first_;
  std::vector<std::string> lines_;
  std::vector<std::set<std::string>> answers_;
};

std::set<std::string> commands_and_help() {
  auto names = e2e::cli_help().command_names();
  std::set<std::string> out(names.begin(), names.end());
  out.insert("help");
  return out;
}

// Every option `sitepatch COMMAND --help` names, with the global ones (and --version).
std::set<std::string> options_of(const e2e::CommandHelp& c) {
  auto out = e2e::names_of(e2e::cli_help().global);
  auto own = e2e::names_of(c.own);
  out.insert(own.begin(), own.end());
  return out;
}

// A command line that puts the cursor on `option`'s value: after a command that has it.
std::string command_for(const e2e::HelpOption& o) {
  for (auto& c : e2e::cli_help().commands)
    for (auto& own : c.own)
      if (own.names == o.names) return c.name;
  return "";
}

std::set<std::string> values_of(const e2e::HelpOption& o) { return {o.values.begin(), o.values.end()}; }

// The global options that take a value: the word after one is not the command.
std::vector<std::string> valued_globals() {
  std::vector<std::string> out;
  for (auto& o : e2e::cli_help().global)
    if (o.takes_value) out.insert(out.end(), o.names.begin(), o.names.end());
  return out;
}

}  // namespace

TEST_CASE("bash completion: the commands, and help's argument", "[e2e][install][completion]") {
  e2e::check_same_names(bash_completes({"sitepatch", ""}), commands_and_help());
  CHECK(bash_completes({"sitepatch", "pl"}) == std::set<std::string>{"plan"});
  CHECK(bash_completes({"sitepatch", "--venv", "/srv/env", "--json", "ro"}) == std::set<std::string>{"rollback"});
  CHECK(bash_completes({"sitepatch", "help", ""}) == commands_and_help());
  CHECK(valued_globals().size() >= 6);
  for (auto& g : valued_globals()) {
    INFO("sitepatch " << g << " always ");
    e2e::check_same_names(bash_completes({"sitepatch", g, "always", ""}), commands_and_help());
  }
}

TEST_CASE("bash completion: each command's options are exactly those its --help prints", "[e2e][install][completion]") {
  for (auto& c : e2e::cli_help().commands) {
    INFO("sitepatch " << c.name << " -");
    e2e::check_same_names(bash_completes({"sitepatch", c.name, "-"}), options_of(c));
  }
  e2e::check_same_names(bash_completes({"sitepatch", "-"}), e2e::names_of(e2e::cli_help().global));
}

TEST_CASE("bash completion: an option's fixed set of values, also after --opt=", "[e2e][install][completion]") {
  int sets = 0;
  for (auto& o : e2e::cli_help().all_options()) {
    if (o.values.empty()) continue;
    ++sets;
    std::string command = command_for(o);
    INFO("sitepatch " << command << " " << o.names.back());
    std::vector<std::string> words = {"sitepatch"};
    if (!command.empty()) words.push_back(command);
    words.push_back(o.names.back());
    words.push_back("");
    CHECK(bash_completes(words) == values_of(o));
    // bash splits `--opt=v` at the `=` before the completion sees it.
    words.back() = "=";
    CHECK(bash_completes(words) == values_of(o));
    words.push_back(o.values.front().substr(0, 2));
    CHECK(bash_completes(words).count(o.values.front()));
  }
  CHECK(sets >= 3);  // --color, audit's --fail-on and --format
}

TEST_CASE("fish completion: the commands, each command's options, the fixed sets of values", "[e2e][install][completion]") {
  auto check = sitepatch::util::run({"fish", "--no-execute", completions("sitepatch.fish")});
  CHECK(check.status == 0);
  CHECK(check.err.empty());
  e2e::check_same_names(fish_completes("sitepatch "), commands_and_help());
  CHECK(fish_completes("sitepatch --json pl") == std::set<std::string>{"plan"});
  for (auto& g : valued_globals()) {
    INFO("sitepatch " << g << " always ");
    e2e::check_same_names(fish_completes("sitepatch " + g + " always "), commands_and_help());
  }
  for (auto& c : e2e::cli_help().commands) {
    INFO("sitepatch " << c.name << " -");
    e2e::check_same_names(fish_completes("sitepatch " + c.name + " -"), options_of(c));
  }
  for (auto& o : e2e::cli_help().all_options()) {
    if (o.values.empty()) continue;
    std::string line = "sitepatch " + command_for(o) + " " + o.names.back() + " ";
    INFO(line);
    CHECK(fish_completes(line) == values_of(o));
  }
}

TEST_CASE("zsh completion: the commands and the fixed sets of values", "[e2e][install][completion]") {
  auto check = sitepatch::util::run({"zsh", "-n", completions("_sitepatch")});
  CHECK(check.status == 0);
  CHECK(check.err.empty());
  CHECK(testsupport::slurp(completions("_sitepatch")).rfind("#compdef sitepatch\n", 0) == 0);
  ZshLines zsh;
  size_t commands = zsh.add("sitepatch "), plan = zsh.add("sitepatch --json pl"), help = zsh.add("sitepatch help ");
  std::vector<size_t> after_globals;
  for (auto& g : valued_globals()) after_globals.push_back(zsh.add("sitepatch " + g + " always "));
  std::vector<std::pair<size_t, std::set<std::string>>> values;
  for (auto& o : e2e::cli_help().all_options()) {
    if (o.values.empty()) continue;
    std::string line = "sitepatch " + command_for(o) + " " + o.names.back();
    values.push_back({zsh.add(line + " "), values_of(o)});
    values.push_back({zsh.add(line + "="), values_of(o)});
  }
  e2e::check_same_names(zsh[commands], commands_and_help());
  CHECK(zsh[plan] == std::set<std::string>{"plan"});
  CHECK(zsh[help] == commands_and_help());
  CHECK(after_globals.size() >= 6);
  for (size_t i : after_globals) {
    INFO(zsh.line(i));
    e2e::check_same_names(zsh[i], commands_and_help());
  }
  CHECK(values.size() >= 6);
  for (auto& [i, expected] : values) {
    INFO(zsh.line(i));
    CHECK(zsh[i] == expected);
  }
}

TEST_CASE("zsh completion: each command's options are exactly those its --help prints", "[e2e][install][completion]") {
  ZshLines zsh;
  std::vector<std::pair<size_t, std::set<std::string>>> asked;
  for (auto& c : e2e::cli_help().commands) asked.push_back({zsh.add("sitepatch " + c.name + " -"), options_of(c)});
  CHECK(asked.size() >= 15);
  for (auto& [i, expected] : asked) {
    INFO(zsh.line(i));
    e2e::check_same_names(zsh[i], expected);
  }
}

TEST_CASE("completion: patch ids and distribution names from the environment typed, in bash, fish and zsh",
          "[e2e][install][completion]") {
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(tmp.path + "/venv");
  venv.install(testsupport::build_wheel({"kvcache-tools", "2.0", {{"kvcache/__init__.py", "def size():\n    return 1\n"}}},
                                        tmp.path + "/wheels"));
  testsupport::spit(tmp.path + "/fix.yaml", "id: bigger-cache\nedits:\n  - module: kvcache\n    function: size\n"
                                            "    replace-body: |\n      return 2\n");
  REQUIRE(testsupport::run_sitepatch({"--venv", venv.root, "apply", tmp.path + "/fix.yaml"}).status == 0);
  std::string bin = SITEPATCH_BIN;
  // bash: the binary typed is asked, with the --venv typed before or after the command.
  CHECK(bash_completes({bin, "--venv", venv.root, "rollback", ""}) == std::set<std::string>{"bigger-cache"});
  CHECK(bash_completes({bin, "show", "--venv", venv.root, "big"}) == std::set<std::string>{"bigger-cache"});
  CHECK(bash_completes({bin, "--venv", venv.root, "edit", "kv"}) == std::set<std::string>{"kvcache-tools"});
  CHECK(bash_completes({bin, "--venv", venv.root, "audit", "--package", "kv"}) ==
        std::set<std::string>{"kvcache-tools"});
  // No environment there: nothing offered, and no error printed into the line.
  CHECK(bash_completes({bin, "--venv", tmp.path + "/none", "rollback", ""}).empty());
  // fish
  CHECK(fish_completes(bin + " --venv " + venv.root + " reapply ") == std::set<std::string>{"bigger-cache"});
  CHECK(fish_completes(bin + " --venv " + venv.root + " capture kv") == std::set<std::string>{"kvcache-tools"});
  // zsh: `sitepatch` found on PATH, as a user's shell finds it.
  ZshLines zsh(bin.substr(0, bin.rfind('/')));
  size_t verify = zsh.add("sitepatch --venv " + venv.root + " verify ");
  size_t edit = zsh.add("sitepatch --venv " + venv.root + " edit ");
  CHECK(zsh[verify] == std::set<std::string>{"bigger-cache"});
  CHECK(zsh[edit].count("kvcache-tools") == 1);
}
