#pragma once
// Which local environment a command works on when --venv is not given: the one the
// user's shell has active, as pip, uv and conda users expect.
#include <optional>
#include <string>

namespace sitepatch::cli {

struct EnvChoice {
  std::string path;  // an environment root or a Python executable
  std::string how;   // "--venv", "$VIRTUAL_ENV", "$CONDA_PREFIX", "a .venv in /srv/app"
};

/// `given` (--venv) if not empty, else $VIRTUAL_ENV, else $CONDA_PREFIX unless it is
/// conda's base environment, else the nearest `.venv` (a folder holding pyvenv.cfg) in
/// the current folder or a parent. As uv does, conda's base environment is a system
/// Python: it is never chosen unless named with --venv.
std::optional<EnvChoice> choose_environment(const std::string& given);

/// Whether `prefix` is conda's base environment: $CONDA_DEFAULT_ENV says "base" (or
/// "root", as conda before 4.4 did), or the prefix is conda's own root (conda-meta/
/// beside condabin/).
bool is_conda_base(const std::string& prefix);

/// The message when there is none: every place that was looked at.
std::string no_environment_message();

}  // namespace sitepatch::cli
