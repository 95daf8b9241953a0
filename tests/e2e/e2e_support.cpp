#include "e2e_support.hpp"

#include <filesystem>

#include "sitepatch/util/hash.hpp"

namespace fs = std::filesystem;

namespace e2e {

std::map<std::string, std::string> read_tree(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().string().find("__pycache__") != std::string::npos) continue;
    files[fs::relative(e.path(), dir).string()] = testsupport::slurp(e.path().string());
  }
  return files;
}

std::map<std::string, std::string> tree_state(const std::string& root) {
  std::map<std::string, std::string> out;
  for (auto& e : fs::recursive_directory_iterator(root)) {
    std::string rel = e.path().string().substr(root.size());
    if (e.is_symlink()) out[rel] = "-> " + fs::read_symlink(e.path()).string();
    else if (e.is_regular_file()) out[rel] = sitepatch::util::sha256_hex(testsupport::slurp(e.path().string()));
    else out[rel] = "dir";
  }
  return out;
}

std::string data_wheel(const std::string& name, const std::string& version, const std::string& out) {
  testsupport::WheelSpec spec{name, version,
                              read_tree(std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/packages/" +
                                        name + "-" + version)};
  return testsupport::build_wheel(spec, out);
}

DemoEnv::DemoEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")) {
  std::string wheels = tmp.path + "/wheels";
  venv.install({data_wheel("torch", "2.9.0", wheels), data_wheel("packaging", "24.0", wheels),
                data_wheel("flashinfer-python", "0.5.3", wheels)});
  installed = read_tree(venv.site_packages + "/flashinfer");
}

std::string DemoEnv::recipe(const std::string& name, const std::string& text) const {
  std::string path = tmp.path + "/" + name;
  testsupport::spit(path, text);
  return path;
}

sitepatch::util::RunResult DemoEnv::sp(std::vector<std::string> args) const {
  args.insert(args.begin(), {"--venv", venv.root});
  return testsupport::run_sitepatch(args);
}

bool DemoEnv::pristine() const { return read_tree(venv.site_packages + "/flashinfer") == installed; }

std::string bundled(const std::string& name) {
  return std::string(SITEPATCH_SOURCE_DIR) + "/recipes/" + name;
}

sitepatch::util::RunResult sp_in(const std::string& app, const std::string& venv, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/env", "NO_COLOR=1", "sh", "-c", "cd \"$0\" && exec \"$@\"", app,
                                   SITEPATCH_BIN, "--venv", venv};
  argv.insert(argv.end(), args.begin(), args.end());
  return sitepatch::util::run(argv);
}

}  // namespace e2e
