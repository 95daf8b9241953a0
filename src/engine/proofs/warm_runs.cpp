// explain --run's warm runs: which commands may run warm (plain words: `python SCRIPT
// ARGS`, `python -m MODULE ARGS`), the client each such run starts instead
// (warm_client.py, with the server and child it may need: warm_server.py,
// warm_child.py), and the session's server stopped at the end, all through the Host:
// here or over ssh alike.
#include "engine/proofs/warm_impl.hpp"

#include <cctype>
#include <regex>

#include "sitepatch/util/file.hpp"
#include "sitepatch_warm_child_source.hpp"
#include "sitepatch_warm_client_source.hpp"
#include "sitepatch_warm_server_source.hpp"

namespace sitepatch::engine::detail {

namespace {

constexpr const char* kStartMark = "sitepatch-run: ";

// Runs the client from its file in the run's folder: the folder is known only there
// ("{dir}" reaches the environment, not argv). -E -S: the client needs no site, and
// must not run the try hook of the folder PYTHONPATH names.
constexpr const char* kBoot =
    "import os;p=os.environ[\"SITEPATCH_WARM_CLIENT\"];"
    "exec(compile(open(p,\"rb\").read(),p,\"exec\"),{\"__file__\":p,\"__name__\":\"sitepatch_warm_client\"})";

// What sh takes literally outside quotes; anything else means more than a word to it.
bool plain_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || (static_cast<unsigned char>(c) >= 0x80) ||
         std::string_view("_-./,:@%+=^").find(c) != std::string_view::npos;
}

std::string quoted(char c) { return c == '\n' ? "a newline" : std::string("`") + c + "`"; }

}  // namespace

std::optional<std::vector<std::string>> plain_words(const std::string& command, std::string* why) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  auto refuse = [&](const std::string& what) -> std::optional<std::vector<std::string>> {
    if (why) *why = what;
    return std::nullopt;
  };
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      size_t end = command.find('\'', i + 1);
      if (end == std::string::npos) return refuse("an unclosed quote");
      word += command.substr(i + 1, end - i - 1);
      in_word = true;
      i = end;
    } else if (c == '"') {
      size_t end = command.find('"', i + 1);
      if (end == std::string::npos) return refuse("an unclosed quote");
      std::string inside = command.substr(i + 1, end - i - 1);
      if (size_t at = inside.find_first_of("$`\\"); at != std::string::npos)
        return refuse(quoted(inside[at]) + " inside double quotes");
      word += inside;
      in_word = true;
      i = end;
    } else if (c == '\\') {
      if (i + 1 >= command.size() || command[i + 1] == '\n') return refuse("a backslash at a line's end");
      word += command[++i];
      in_word = true;
    } else if (plain_char(c)) {
      if (c == '=' && words.empty() && word.find_first_of("'\"\\") == std::string::npos)
        return refuse("a variable assignment");
      word += c;
      in_word = true;
    } else {
      return refuse(quoted(c));
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::optional<std::vector<std::string>> plain_words(const std::string& command) { return plain_words(command, nullptr); }

std::string cold_because(const std::string& command, std::vector<std::string>* out) {
  std::string why;
  auto words = plain_words(command, &why);
  if (!words) return "the command is more than plain words to sh (" + why + ")";
  static const std::regex python(R"(python(\d+(\.\d+)?)?)");
  static const std::regex module(R"([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)");
  auto& w = *words;
  if (w.empty() || !std::regex_match(w[0], python))
    return "the command does not start with python, python3 or pythonX.Y";
  if (w.size() < 2 || w[1] == "-" || (w[1] != "-m" && w[1][0] == '-'))
    return "only `python SCRIPT ARGS` and `python -m MODULE ARGS` run warm (no other python option)";
  if (w[1] == "-m" && (w.size() < 3 || !std::regex_match(w[2], module)))
    return "`python -m` names no module";
  if (out) *out = std::move(w);
  return "";
}

std::string take_start_line(std::string& err) {
  std::string_view mark = kStartMark;
  if (err.compare(0, mark.size(), mark) != 0) return "";
  size_t end = err.find('\n');
  std::string said = err.substr(mark.size(), end == std::string::npos ? std::string::npos : end - mark.size());
  err.erase(0, end == std::string::npos ? err.size() : end + 1);
  return said;
}

WarmRuns::WarmRuns(host::Host& h, const site::Environment& env, const std::string& command, bool cold)
    : h_(h), python_(env.python) {
  cold_ = cold ? "--cold" : cold_because(command, &words_);
  if (cold_.empty()) session_ = util::random_name(16);
}

WarmRuns::~WarmRuns() {
  if (!used_) return;
  // The last command of the session: the server goes, its folder with it. Should this
  // fail (or never come: sitepatch killed), the server ends on its own once the process
  // that ran the runs is gone.
  try {
    host::CommandRun stop;
    stop.argv = {python_, "-E", "-S", "-c", kBoot, "--stop"};
    stop.files["warm_client.py"] = embedded::warm_client_source;
    stop.env["SITEPATCH_WARM_CLIENT"] = "{dir}/warm_client.py";
    stop.env["SITEPATCH_WARM_SESSION"] = session_;
    stop.capture = true;
    h_.run_command(stop);
  } catch (...) {
  }
}

void WarmRuns::warm(host::CommandRun& run) {
  if (!cold_.empty()) return;
  used_ = true;
  run.argv = {words_[0], "-E", "-S", "-c", kBoot};
  run.argv.insert(run.argv.end(), words_.begin(), words_.end());
  run.files["warm_client.py"] = embedded::warm_client_source;
  run.files["warm_server.py"] = embedded::warm_server_source;
  run.files["warm_child.py"] = embedded::warm_child_source;
  run.env["SITEPATCH_WARM_CLIENT"] = "{dir}/warm_client.py";
  run.env["SITEPATCH_WARM_SESSION"] = session_;
}

}  // namespace sitepatch::engine::detail
