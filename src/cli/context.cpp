#include "commands.hpp"
#include "context.hpp"

#include "env_choice.hpp"
#include "pager.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <iterator>

#include <fmt/color.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "sitepatch/python/check.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/store/warm_up.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {
namespace {

// no-color.org: NO_COLOR present and not empty; a dumb terminal shows escapes as text.
bool no_color_asked() {
  const char* no = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return (no && *no) || (term && std::string(term) == "dumb");
}

// bixense.com/clicolors: CLICOLOR_FORCE set and not "0" asks for colour off a terminal
// too (a CI log that renders it, `| less -R`); NO_COLOR still wins.
bool color_forced() {
  const char* force = std::getenv("CLICOLOR_FORCE");
  const char* no = std::getenv("NO_COLOR");
  return force && *force && std::string(force) != "0" && !(no && *no);
}

}  // namespace

Output::Output(const GlobalOptions& g) : g_(g), json_(g.json), quiet_(g.quiet) {
  if (g.color == "always") color_ = true;
  else if (g.color == "never") color_ = false;
  else color_ = color_forced() || (::isatty(STDOUT_FILENO) && !no_color_asked());
}

std::string Output::paint(const std::string& text, Paint p) const {
  if (!color_ || p == Paint::plain) return text;
  fmt::text_style st;
  switch (p) {
    case Paint::added: st = fg(fmt::terminal_color::green); break;
    case Paint::removed: st = fg(fmt::terminal_color::red); break;
    case Paint::hunk: st = fg(fmt::terminal_color::cyan); break;
    case Paint::header: st = fmt::emphasis::bold; break;
    case Paint::ok: st = fg(fmt::terminal_color::green); break;
    case Paint::warn: st = fg(fmt::terminal_color::yellow); break;
    case Paint::bad: st = fg(fmt::terminal_color::red) | fmt::emphasis::bold; break;
    case Paint::dim: st = fg(fmt::terminal_color::bright_black); break;
    case Paint::plain: break;
  }
  return fmt::format(st, "{}", text);
}

void Output::diff(const std::string& text) const {
  if (!color_) {
    std::cout << text;
    return;
  }
  auto lines = util::split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (const auto& line : lines) {
    Paint p = Paint::plain;
    if (util::starts_with(line, "diff --git") || util::starts_with(line, "--- ") ||
        util::starts_with(line, "+++ ") || util::starts_with(line, "index "))
      p = Paint::header;
    else if (util::starts_with(line, "@@")) p = Paint::hunk;
    else if (util::starts_with(line, "+")) p = Paint::added;
    else if (util::starts_with(line, "-")) p = Paint::removed;
    std::cout << paint(line, p) << "\n";
  }
}

void Output::page() const { start_pager(g_); }

void Output::out(const std::string& line) const { std::cout << line << "\n"; }
void Output::err(const std::string& line) const { std::cerr << line << "\n"; }
// A diff of a module in another encoding (latin-1) holds bytes that are not UTF-8:
// JSON gets U+FFFD for them rather than an error.
void print_document(nlohmann::json j) {
  j["schema"] = kJsonSchema;
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void Output::document(const nlohmann::json& j) const { print_document(j); }

Env::~Env() {
  if (host) host->finish();
  session.reset();
}

Env open_env(const GlobalOptions& g) {
  store::warm_up();  // while the environment is probed
  std::string venv = g.venv;
  Env e;
  if (!g.host.empty()) {
    // A local $VIRTUAL_ENV says nothing about the other machine.
    if (venv.empty())
      throw Error("--host " + g.host + " needs --venv: the environment's path on that machine", Exit::usage);
    std::string ssh = g.ssh_command;
    if (ssh.empty())
      if (const char* v = std::getenv("SITEPATCH_SSH")) ssh = v;
    e.host = host::make_ssh_host(host::SshTarget::parse(g.host), ssh);
  } else {
    auto choice = choose_environment(venv);
    if (!choice) throw Error(no_environment_message(), Exit::usage);
    venv = choice->path;
    spdlog::info("environment: {} ({})", venv, choice->how);
    if (choice->how != "--venv") e.found_by = choice->how;
    e.host = host::make_local_host();
  }
  try {
    e.session = std::make_unique<engine::Session>(engine::Session::open(*e.host, venv, g.state_dir));
  } catch (const Error& err) {
    // A $VIRTUAL_ENV left from a removed venv: the user must learn where the path came from.
    if (e.found_by.empty()) throw;
    throw Error(std::string(err.what()) + " (the path is from " + e.found_by +
                    "; pass --venv PATH to choose another)",
                err.code());
  }
  e.session->lock_timeout_ms = int(g.lock_timeout * 1000);
  // The invocation that reaches this same environment, for the commands messages suggest.
  std::string p = "sitepatch";
  if (!g.host.empty()) p += " --host " + util::shell_word(g.host);
  if (!g.ssh_command.empty()) p += " --ssh-command " + util::shell_word(g.ssh_command);
  p += " --venv " + util::shell_word(e.session->env.prefix);
  if (!g.state_dir.empty()) p += " --state-dir " + util::shell_word(g.state_dir);
  e.session->invocation = p;
  return e;
}

void say_environment(const Output& out, const Env& env) {
  if (env.found_by.empty() || out.json() || out.quiet()) return;
  out.err("environment: " + env.session->env.prefix + " (" + env.found_by + ")");
}

namespace {

struct RecipeText {
  std::string label;  // its path, or "-" for standard input
  tl::expected<std::string, std::string> text;
};

// What the command line names: files, folders (their *.yaml and *.yml, in name order,
// as run-parts and conf.d folders are read), and "-" (standard input, once).
std::vector<RecipeText> recipe_texts(const std::vector<std::string>& args, std::vector<recipe::Diagnostic>& problems,
                                     bool empty_ok) {
  namespace fs = std::filesystem;
  std::vector<RecipeText> out;
  bool stdin_read = false;
  for (const auto& a : args) {
    if (a == "-") {
      if (stdin_read) {
        problems.push_back({a, {0, 0}, "standard input (-) can be read only once"});
        continue;
      }
      stdin_read = true;
      std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
      out.push_back({a, std::move(text)});
      continue;
    }
    std::error_code ec;
    // A recipe is code too: what it writes into site-packages runs there, as root.
    check_code_file(a, "recipe", "what it writes into site-packages runs there");
    if (!fs::is_directory(a, ec)) {
      out.push_back({a, util::read_named_file(a)});
      continue;
    }
    std::vector<std::string> found;
    for (auto& e : fs::directory_iterator(a, ec)) {
      std::string ext = e.path().extension().string();
      if ((ext == ".yaml" || ext == ".yml") && e.is_regular_file()) found.push_back(e.path().string());
    }
    if (ec) problems.push_back({a, {0, 0}, "cannot read the recipe folder: " + ec.message()});
    else if (found.empty() && !empty_ok) problems.push_back({a, {0, 0}, "no recipes (*.yaml, *.yml) in this folder"});
    std::sort(found.begin(), found.end());
    for (auto& f : found) {
      check_code_file(f, "recipe", "what it writes into site-packages runs there");
      out.push_back({f, util::read_file(f)});
    }
  }
  return out;
}

}  // namespace

std::vector<recipe::Recipe> load_recipes(const std::vector<std::string>& paths, bool empty_folder_ok) {
  std::vector<recipe::Recipe> out;
  std::vector<recipe::Diagnostic> problems;
  for (auto& [p, text] : recipe_texts(paths, problems, empty_folder_ok)) {
    if (!text) {
      problems.push_back({p, {0, 0}, "cannot read recipe: " + text.error()});
      continue;
    }
    try {
      out.push_back(recipe::parse(*text, p));
      auto python_problems = python::check_recipe(out.back());
      if (!python_problems.empty()) {
        problems.insert(problems.end(), python_problems.begin(), python_problems.end());
        out.pop_back();
        continue;
      }
      std::error_code ec;
      out.back().origin = p == "-" ? "(standard input)" : std::filesystem::absolute(p, ec).lexically_normal().string();
    } catch (const recipe::RecipeError& e) {
      problems.insert(problems.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (out[i].id == out[j].id)
        problems.push_back({out[i].path, {1, 1},
                            "recipe id `" + out[i].id + "` is also the id of " + out[j].path});
  if (!problems.empty()) throw recipe::RecipeError(problems);
  return out;
}

std::string format_time(int64_t t) {
  std::time_t tt = std::time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

}  // namespace sitepatch::cli
