#pragma once
// What an environment is: its Python, prefix, site-packages folders, bytecode tag;
// which module is which file; which .pyc belong to a source; which relative paths
// are allowed. Pure: the host fetched the facts.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::site {

/// Facts the environment's own Python reported (host::Host::probe).
struct Environment {
  std::string python;                   // the interpreter used
  std::string prefix;                   // sys.prefix
  std::string base_prefix;              // sys.base_prefix
  std::string version;                  // "3.11.7"
  std::string cache_tag;                // "cpython-311"
  std::vector<std::string> ext_suffixes;  // extension modules' suffixes, in the finder's order (".cpython-311-x86_64-linux-gnu.so", ".abi3.so", ".so"); empty when unknown
  std::vector<std::string> site_dirs;   // where import looks, in sys.path's order (stdlib left out); unique, existing
  std::vector<std::string> pth_dirs;    // those of site_dirs a .pth file added
  bool dpkg = false;                    // the machine keeps Debian's package database
  std::vector<std::string> builtins;    // dir(builtins) of that interpreter (empty when unknown)
  std::vector<std::string> stdlib;      // top-level modules of its standard library, sorted (empty when unknown)
  int cpus = 0;                         // the cores of the machine it runs on (0 when unknown)
};

/// "" when `dir` is the environment's own (inside its prefix); otherwise who else
/// owns it and shares it, for messages: "the base interpreter at /usr", "the system
/// Python (Debian's dpkg owns its files)", "a folder a .pth file adds".
std::string shared_owner(const Environment& env, const std::string& dir);

/// Where the history of patches to files in a folder the environment does not own
/// lives: with the folder's owner, so every environment that sees the folder (and the
/// owner's own Python) finds the same history, and deleting a venv loses none of it.
struct HistoryHome {
  std::string prefix;     // the owner's prefix: records keep site folders relative to it
  std::string state_dir;  // the history's repository
  std::string owner;      // shared_owner's words
};

/// nullopt when `dir` is the environment's own. A folder a .pth file adds keeps its
/// history inside itself; a base interpreter's folder, in the base's default state
/// folder; the system Python's, under /var/lib/sitepatch.
std::optional<HistoryHome> history_home(const Environment& env, const std::string& dir);

/// An environment's own history by default: `<prefix>/.sitepatch`, except for the
/// system Python (prefix /usr or /usr/local: dpkg owns /usr), whose history goes under
/// /var/lib/sitepatch (`/var/lib/sitepatch/usr`).
std::string default_state_dir(const std::string& prefix);

/// A path is safe when it is relative, has no "..", no empty or "." segment, no
/// backslash or NUL. Returns an explanation when not safe.
std::optional<std::string> unsafe_relative_path(std::string_view rel);

/// Candidate relative files for a dotted module: a/b.py, a/b/__init__.py (in that
/// order). Empty when `module` is not a valid dotted name.
std::vector<std::string> module_candidates(std::string_view module);

/// The files that `import` would load in place of the source `rel` (a relative .py path)
/// from the same folder, because the finder tries extension modules first: for a/b.py,
/// a/b/__init__<suffix> (a package comes first) and a/b<suffix>; for a/b/__init__.py,
/// a/b/__init__<suffix>. Empty for a file that is no module source.
std::vector<std::string> compiled_twins(std::string_view rel, const std::vector<std::string>& ext_suffixes);

/// Dotted module name for a relative .py path (a/b/__init__.py -> a.b).
std::string module_for_file(std::string_view rel);

/// Whether `name` (an entry of `<dir>/__pycache__`) is bytecode of `stem`.py:
/// stem.<tag>.pyc, stem.<tag>.opt-1.pyc, ...
bool is_pyc_of(std::string_view name, std::string_view stem);

/// True when `path` (absolute, normalized) is `dir` or inside it.
bool is_within(std::string_view path, std::string_view dir);

}  // namespace sitepatch::site
