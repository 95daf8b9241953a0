#include "env_choice.hpp"

#include <cstdlib>
#include <filesystem>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {
namespace fs = std::filesystem;

namespace {

std::string variable(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// uv and poetry keep a project's environment in .venv beside its pyproject.toml, and
// their users run commands from anywhere below it.
std::optional<std::string> nearest_dot_venv() {
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  if (ec) return std::nullopt;
  for (;;) {
    if (fs::is_regular_file(dir / ".venv" / "pyvenv.cfg", ec)) return (dir / ".venv").string();
    if (dir == dir.root_path() || dir.empty()) return std::nullopt;
    dir = dir.parent_path();
  }
}

}  // namespace

bool is_conda_base(const std::string& prefix) {
  std::string named = variable("CONDA_DEFAULT_ENV");
  if (named == "base" || named == "root") return true;
  std::error_code ec;
  return fs::is_directory(fs::path(prefix) / "conda-meta", ec) && fs::is_directory(fs::path(prefix) / "condabin", ec);
}

std::optional<EnvChoice> choose_environment(const std::string& given) {
  if (!given.empty()) return EnvChoice{given, "--venv"};
  if (auto v = variable("VIRTUAL_ENV"); !v.empty()) return EnvChoice{v, "$VIRTUAL_ENV"};
  if (auto c = variable("CONDA_PREFIX"); !c.empty() && !is_conda_base(c)) return EnvChoice{c, "$CONDA_PREFIX"};
  if (auto d = nearest_dot_venv()) return EnvChoice{*d, "a .venv in " + fs::path(*d).parent_path().string()};
  return std::nullopt;
}

std::string no_environment_message() {
  std::error_code ec;
  std::string cwd = fs::current_path(ec).string();
  std::string m =
      "no environment given: pass --venv PATH (a venv root or its Python), activate a venv ($VIRTUAL_ENV) or "
      "a conda environment ($CONDA_PREFIX), or run from a project with a .venv (none in " +
      (cwd.empty() ? std::string("this folder") : cwd) + " or above)";
  if (auto c = variable("CONDA_PREFIX"); !c.empty())
    m += "; the active conda environment " + c +
         " is conda's base, which sitepatch treats as a system Python, as uv does: pass --venv " + util::shell_word(c) +
         " to patch it";
  return m;
}

}  // namespace sitepatch::cli
