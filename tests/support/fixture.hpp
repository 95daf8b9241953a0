#pragma once
// Test support shared by every test: fresh temp folders, real wheels, real venvs with
// packages installed by real pip, and the built sitepatch binary.
#include <map>
#include <string>
#include <vector>

#include "sitepatch/util/process.hpp"

namespace testsupport {

/// A fresh folder under $TMPDIR, else /tmp (symlinks resolved), removed with everything in it
/// unless SITEPATCH_KEEP_TMP is set.
struct TempDir {
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path;
};

/// Whole file as bytes; throws std::runtime_error when it cannot be read.
std::string slurp(const std::string& path);
/// Writes `content` to `path`, creating parent folders; throws on failure.
void spit(const std::string& path, const std::string& content);

/// What goes into a wheel: files by path relative to site-packages.
struct WheelSpec {
  std::string name, version;
  std::map<std::string, std::string> files;  // rel path -> content
};

/// Writes a real py3-none-any wheel (zip with dist-info METADATA, WHEEL and a RECORD
/// with sha256 rows) into `out_dir`; returns its path.
std::string build_wheel(const WheelSpec& spec, const std::string& out_dir);

/// The interpreter tests build venvs from ($SITEPATCH_TEST_PYTHON, else python3 in
/// PATH), resolved once to its real executable.
const std::string& outer_python();

/// A `bin/python3` for a Python older than the agent supports: none is installed here,
/// so it runs outer_python() reporting 3.6.9 as its version.
std::string old_python_script();

/// A venv made by `python3 -m venv --without-pip`; packages go in with the outer
/// interpreter's pip running under the venv's own Python.
struct Venv {
  std::string root, python, site_packages;

  static Venv create(const std::string& dir);
  /// pip install --no-index --no-deps of one wheel (or a requirement-free path).
  void install(const std::string& wheel) const;
  /// pip install --no-index --no-deps with these extra arguments (wheels, flags).
  void install(const std::vector<std::string>& args) const;
  /// pip install --upgrade of a newer (or other) version's wheel.
  void upgrade(const std::string& wheel) const;
  /// pip uninstall -y `name`.
  void uninstall(const std::string& name) const;
  /// Runs `python -c code` in the venv.
  sitepatch::util::RunResult run_python(const std::string& code) const;
  /// Runs pip (any subcommand and args) for this venv; throws when it fails.
  sitepatch::util::RunResult pip(const std::vector<std::string>& args) const;
};

/// A base interpreter of the test's own in `dir`: outer_python()'s executable copied
/// into bin/, its standard library linked entry by entry, and an empty site-packages,
/// so a venv made from it with --system-site-packages sees a base folder that no other
/// test (and not the machine's own Python) shares. As a Venv: install() puts packages
/// into that site-packages.
Venv base_interpreter(const std::string& dir);

/// A venv made by `python -m venv --without-pip` (with --system-site-packages when
/// `system_site`).
Venv venv_from(const std::string& python, const std::string& dir, bool system_site);

/// The interpreter of the newest pyenv Python `minor` ("3.8") installed here; throws
/// naming the pyenv folder when there is none.
std::string pyenv_python(const std::string& minor);

/// Runs the built binary (SITEPATCH_BIN) with `args`; stdin is empty, NO_COLOR=1.
/// `env` sets variables for the child; an empty value removes the variable.
sitepatch::util::RunResult run_sitepatch(const std::vector<std::string>& args,
                                         const std::map<std::string, std::string>& env = {});

}  // namespace testsupport
