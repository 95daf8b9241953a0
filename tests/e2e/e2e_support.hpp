#pragma once
// An environment for end-to-end tests: a real venv with the demo packages (the
// FlashInfer stand-in, and stand-ins for torch and packaging, which PyPI would
// provide) installed by real pip from wheels built here.
#include <map>
#include <string>
#include <vector>

#include "sitepatch/util/strings.hpp"
#include "support/fixture.hpp"

namespace e2e {

/// Every file under `dir`, by path relative to it.
std::map<std::string, std::string> read_tree(const std::string& dir);

/// Every entry under `root` (folders, links, each file's sha256), __pycache__ included:
/// what a command that must write nothing leaves as it was.
std::map<std::string, std::string> tree_state(const std::string& root);

/// A wheel of tests/data/packages/<name>-<version>/.
std::string data_wheel(const std::string& name, const std::string& version, const std::string& out);

struct DemoEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::map<std::string, std::string> installed;  // flashinfer/... -> bytes pip installed

  DemoEnv();
  std::string site(const std::string& rel) const { return venv.site_packages + "/" + rel; }
  std::string read(const std::string& rel) const { return testsupport::slurp(site(rel)); }
  /// Writes a recipe into the temp folder; returns its path.
  std::string recipe(const std::string& name, const std::string& text) const;
  /// sitepatch --venv <venv> args...
  sitepatch::util::RunResult sp(std::vector<std::string> args) const;
  /// True when every file of flashinfer is byte-identical to what pip installed.
  bool pristine() const;
};

/// sitepatch --venv <venv> args..., run in the user's folder `app` (NO_COLOR set): how
/// the explain --run tests start it, beside the scripts they compile.
sitepatch::util::RunResult sp_in(const std::string& app, const std::string& venv, std::vector<std::string> args);

/// The bundled recipe's path.
std::string bundled(const std::string& name);

}  // namespace e2e
