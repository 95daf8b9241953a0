#pragma once
// What every subcommand gets: the global options and the way to print.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sitepatch/engine/engine.hpp"
#include "sitepatch/host/host.hpp"

namespace sitepatch::cli {

struct GlobalOptions {
  std::string venv;       // --venv, else $VIRTUAL_ENV
  std::string state_dir;  // --state-dir
  bool json = false;
  std::string color = "auto";
  int verbose = 0;
  bool quiet = false;
  bool no_pager = false;  // --no-pager
  double lock_timeout = 30;  // seconds
  std::string host;         // --host [user@]host[:port]; empty: this machine
  std::string ssh_command;  // --ssh-command, else $SITEPATCH_SSH, else "ssh"
};

enum class Paint { plain, added, removed, hunk, header, ok, warn, bad, dim };

/// Human or JSON output; colour only on a terminal and without NO_COLOR.
class Output {
 public:
  explicit Output(const GlobalOptions& g);
  bool json() const { return json_; }
  bool quiet() const { return quiet_; }
  std::string paint(const std::string& text, Paint p) const;
  /// Diffs follow: on a terminal they go through the pager (pager.hpp) from here on.
  void page() const;
  /// A unified diff on stdout, coloured line by line.
  void diff(const std::string& text) const;
  /// A line on stdout / on stderr.
  void out(const std::string& line) const;
  void err(const std::string& line) const;
  /// The one JSON document of a --json run (print_document adds its "schema").
  void document(const nlohmann::json& j) const;

 private:
  const GlobalOptions& g_;
  bool json_;
  bool color_;
  bool quiet_;
};

/// The version of the --json contract every document carries as "schema": a script
/// checks it before reading, and it changes only when a document changes incompatibly.
constexpr int kJsonSchema = 1;

/// Prints `j`, with "schema": kJsonSchema, as the one document of a --json run. Every
/// JSON document on stdout goes through here (SARIF, a standard of its own, does not).
void print_document(nlohmann::json j);

/// A value a document may lack: "" (a distribution that owns nothing, a commit a dry
/// run did not make) is null, so a script tells "none" from a value.
inline nlohmann::json or_null(const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); }
/// A line (or other count from 1) that is not known: 0 is null.
inline nlohmann::json or_null(int n) { return n > 0 ? nlohmann::json(n) : nlohmann::json(); }

/// "1 call", "3 calls".
inline std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// Opens the environment the global options name (its Python starts once).
struct Env {
  std::unique_ptr<host::Host> host;
  std::unique_ptr<engine::Session> session;
  /// How the environment was found when neither --venv nor --host named it ("$VIRTUAL_ENV",
  /// "a .venv in /srv/app"); empty when it was named.
  std::string found_by;
  Env() = default;
  Env(Env&&) = default;
  Env& operator=(Env&&) = default;
  /// The connection starts closing before the session tidies up (a remote history's
  /// local copy is removed), so the two overlap.
  ~Env();
};
Env open_env(const GlobalOptions& g);

/// A writing command's first line when the environment was found rather than named
/// (`environment: /srv/app/.venv (a .venv in /srv/app)`), so a shell with another
/// environment active does not patch it unnoticed. On stderr; not with --json or --quiet.
void say_environment(const Output& out, const Env& env);

/// Reads and validates recipe files; every problem of every file, then one error. A
/// folder with no recipe is one, unless `empty_folder_ok` (sync: an empty set).
std::vector<recipe::Recipe> load_recipes(const std::vector<std::string>& paths, bool empty_folder_ok = false);

/// "2026-11-30 04:50 UTC"
std::string format_time(int64_t t);

}  // namespace sitepatch::cli
