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
  std::vector<std::string> site_dirs;   // where import looks, in sys.path's order (stdlib left out); unique, existing
  std::vector<std::string> pth_dirs;    // those of site_dirs a .pth file added
  bool dpkg = false;                    // the machine keeps Debian's package database
  std::vector<std::string> builtins;    // dir(builtins) of that interpreter (empty when unknown)
};

/// "" when `dir` is the environment's own (inside its prefix); otherwise who else
/// owns it and shares it, for messages: "the base interpreter at /usr", "the system
/// Python (Debian's dpkg owns its files)", "a folder a .pth file adds".
std::string shared_owner(const Environment& env, const std::string& dir);

/// A path is safe when it is relative, has no "..", no empty or "." segment, no
/// backslash or NUL. Returns an explanation when not safe.
std::optional<std::string> unsafe_relative_path(std::string_view rel);

/// Candidate relative files for a dotted module: a/b.py, a/b/__init__.py (in that
/// order). Empty when `module` is not a valid dotted name.
std::vector<std::string> module_candidates(std::string_view module);

/// Dotted module name for a relative .py path (a/b/__init__.py -> a.b).
std::string module_for_file(std::string_view rel);

/// Whether `name` (an entry of `<dir>/__pycache__`) is bytecode of `stem`.py:
/// stem.<tag>.pyc, stem.<tag>.opt-1.pyc, ...
bool is_pyc_of(std::string_view name, std::string_view stem);

/// True when `path` (absolute, normalized) is `dir` or inside it.
bool is_within(std::string_view path, std::string_view dir);

}  // namespace sitepatch::site
