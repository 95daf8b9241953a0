#include "support/fixture.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"
#include "support/cache.hpp"

namespace testsupport {
namespace fs = std::filesystem;
using sitepatch::util::RunResult;

namespace {

RunResult must_run(const std::vector<std::string>& argv, std::string_view input = {}) {
  RunResult r = sitepatch::util::run(argv, input);
  if (r.status != 0)
    throw std::runtime_error(sitepatch::util::join(argv, " ").substr(0, 300) + " failed (status " +
                             std::to_string(r.status) + "):\n" + r.out + r.err);
  return r;
}


// A folder holding only the outer interpreter's `pip` package: on PYTHONPATH it lets
// the venv's own Python run pip without pip's --python re-launch (half the time).
const std::string& pip_shim() {
  static TempDir dir;
  static std::string path = [] {
    RunResult r = must_run({outer_python(), "-c", "import os, pip; print(os.path.dirname(pip.__file__))"});
    std::string pip_dir = sitepatch::util::trim(r.out);
    fs::create_directory_symlink(pip_dir, dir.path + "/pip");
    return dir.path;
  }();
  return path;
}

// The cache key of installing `wheels` (wheel files, no flags) into `v`, a venv made by
// venv_from without the system's site-packages and nothing installed yet; nullopt for
// any other install, which pip always does itself.
std::optional<std::string> fresh_install_key(const Venv& v, const std::vector<std::string>& wheels) {
  std::error_code ec;
  if (wheels.empty() || !fs::is_directory(v.site_packages) || !fs::is_empty(v.site_packages, ec)) return std::nullopt;
  std::string cfg = v.root + "/pyvenv.cfg";
  if (!fs::exists(cfg)) return std::nullopt;
  std::string key = "install v1\n" + fs::canonical(v.python).string() + "\n" +
                    fs::relative(v.site_packages, v.root).string() + "\n";
  for (auto& line : sitepatch::util::split(slurp(cfg), '\n')) {
    if (line.rfind("command", 0) == 0) continue;  // names the venv's own folder
    if (line.rfind("include-system-site-packages", 0) == 0 && line.find("false") == std::string::npos)
      return std::nullopt;
    key += line + "\n";
  }
  std::string pip_dir = fs::read_symlink(pip_shim() + "/pip").string();
  key += pip_dir + "\n" + slurp(pip_dir + "/__init__.py");
  for (auto& w : wheels) {
    if (fs::path(w).extension() != ".whl" || !fs::is_regular_file(w)) return std::nullopt;
    key += fs::path(w).filename().string() + "\n" + sitepatch::util::sha256_hex(slurp(w)) + "\n";
  }
  return sitepatch::util::sha256_hex(key).substr(0, 32);
}

// pip records where each wheel came from (PEP 610's direct_url.json, and its RECORD row):
// a copied install names the wheels of the test that made it, so each URL is made the
// one this install's wheel gives, as pip would have written it.
void point_direct_urls(const std::string& site_packages, const std::vector<std::string>& wheels) {
  for (auto& e : fs::directory_iterator(site_packages)) {
    std::string info = e.path().filename().string();
    std::string file = e.path().string() + "/direct_url.json";
    if (!sitepatch::util::ends_with(info, ".dist-info") || !fs::exists(file)) continue;
    auto j = nlohmann::json::parse(slurp(file));
    std::string url = j.value("url", "");
    std::string base = url.substr(url.rfind('/') + 1);
    for (auto& w : wheels) {
      fs::path abs = fs::absolute(w).lexically_normal();
      std::string text = slurp(file);
      // The folder part only: the file name keeps pip's quoting (a '+' is %2B).
      std::string now = "file://" + abs.parent_path().string() + "/" + base;
      if (base.empty() || abs.filename().string().size() < 5 || url == now ||
          sitepatch::util::split(base, '-')[0] != sitepatch::util::split(abs.filename().string(), '-')[0])
        continue;
      size_t at = text.find(url);
      if (at == std::string::npos) break;
      text.replace(at, url.size(), now);
      spit(file, text);
      std::string record = e.path().string() + "/RECORD", rows;
      for (auto& line : sitepatch::util::split(slurp(record), '\n')) {
        if (line.empty()) continue;
        // pip's csv rows end in "\r\n": kept as they were.
        std::string end = sitepatch::util::ends_with(line, "\r") ? "\r\n" : "\n";
        rows += sitepatch::util::starts_with(line, info + "/direct_url.json,")
                    ? info + "/direct_url.json,sha256=" + sitepatch::util::sha256_record(text) + "," +
                          std::to_string(text.size()) + end
                    : line + "\n";
      }
      spit(record, rows);
      break;
    }
  }
}

}  // namespace

TempDir::TempDir() {
  // $TMPDIR as every tool takes it: scripts/test.sh points it at a tmpfs (issue 52).
  const char* root = std::getenv("TMPDIR");
  std::string tmpl = std::string(root && *root == '/' ? root : "/tmp") + "/sitepatch-test-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
  char real[PATH_MAX];
  path = ::realpath(tmpl.c_str(), real) ? real : tmpl;
}

TempDir::~TempDir() {
  if (std::getenv("SITEPATCH_KEEP_TMP")) return;
  std::error_code ec;
  fs::remove_all(path, ec);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& content) {
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string build_wheel(const WheelSpec& spec, const std::string& out_dir) {
  // One wheel builder for the demo and the tests: scripts/build_wheel.py, given a
  // folder laid out as the wheel's contents. A wheel is a function of its spec and the
  // script: built once into the test cache, then copied (a Python start saved per wheel).
  const std::string script = std::string(SITEPATCH_SOURCE_DIR) + "/scripts/build_wheel.py";
  std::string key = "wheel v1\n" + spec.name + '\0' + spec.version + '\0' + slurp(script);
  for (auto& [rel, content] : spec.files) key += rel + '\0' + std::to_string(content.size()) + '\0' + content;
  std::string made = cached_folder("wheels", sitepatch::util::sha256_hex(key).substr(0, 32), [&](const std::string& into) {
    TempDir stage;
    for (auto& [rel, content] : spec.files) spit(stage.path + "/" + rel, content);
    must_run({outer_python(), script, stage.path, spec.name, spec.version, into});
  });
  for (auto& e : fs::directory_iterator(made))
    if (e.path().extension() == ".whl") {
      fs::create_directories(out_dir);
      std::string to = (fs::path(out_dir) / e.path().filename()).string();
      fs::copy_file(e.path(), to, fs::copy_options::overwrite_existing);
      return to;
    }
  throw std::runtime_error("no wheel in " + made);
}

const std::string& outer_python() {
  static std::string python = [] {
    const char* env = std::getenv("SITEPATCH_TEST_PYTHON");
    // The one the build resolved, while it is there: no shim to start per test.
    std::string configured = SITEPATCH_OUTER_PYTHON;
    if (!(env && *env) && !configured.empty() && ::access(configured.c_str(), X_OK) == 0) return configured;
    RunResult r = must_run({env && *env ? env : "python3", "-c", "import sys; print(sys.executable)"});
    return sitepatch::util::trim(r.out);
  }();
  return python;
}

Venv Venv::create(const std::string& dir) { return venv_from(outer_python(), dir, false); }

std::string pyenv_python(const std::string& minor) {
  namespace fs = std::filesystem;
  const char* root = std::getenv("PYENV_ROOT");
  std::string versions = std::string(root ? root : std::string(std::getenv("HOME")) + "/.pyenv") + "/versions";
  std::string found;
  if (fs::is_directory(versions))
    for (auto& entry : fs::directory_iterator(versions)) {
      std::string name = entry.path().filename().string();
      if (name.rfind(minor + ".", 0) == 0 && fs::exists(entry.path() / "bin/python3"))
        found = std::max(found, (entry.path() / "bin/python3").string());
    }
  if (found.empty()) throw std::runtime_error("no Python " + minor + " under " + versions + " (pyenv install " + minor + ")");
  return found;
}

Venv venv_from(const std::string& python, const std::string& dir, bool system_site) {
  std::vector<std::string> argv = {python, "-m", "venv", "--without-pip"};
  if (system_site) argv.push_back("--system-site-packages");
  argv.push_back(dir);
  must_run(argv);
  Venv v;
  v.root = fs::absolute(dir).lexically_normal().string();
  v.python = v.root + "/bin/python";
  RunResult r = must_run({v.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
  v.site_packages = sitepatch::util::trim(r.out);
  return v;
}

Venv base_interpreter(const std::string& dir) {
  RunResult r = must_run({outer_python(), "-c",
                          "import sys, sysconfig; print(sysconfig.get_paths()['stdlib']); "
                          "print('python%d.%d' % sys.version_info[:2])"});
  auto lines = sitepatch::util::split(sitepatch::util::trim(r.out), '\n');
  const std::string stdlib = lines.at(0), name = lines.at(1);
  Venv v;
  v.root = fs::absolute(dir).lexically_normal().string();
  fs::create_directories(v.root + "/bin");
  // A copy, not a link: Python finds its prefix from where its executable really is.
  fs::copy_file(outer_python(), v.root + "/bin/" + name);
  fs::create_symlink(name, v.root + "/bin/python3");
  std::string lib = v.root + "/lib/" + name;
  fs::create_directories(lib + "/site-packages");
  for (auto& e : fs::directory_iterator(stdlib))
    if (e.path().filename() != "site-packages") fs::create_symlink(e.path(), lib + "/" + e.path().filename().string());
  v.python = v.root + "/bin/python3";
  v.site_packages = lib + "/site-packages";
  RunResult check = must_run({v.python, "-c", "import sys, sysconfig; print(sys.prefix); print(sysconfig.get_paths()['purelib'])"});
  if (sitepatch::util::trim(check.out) != v.root + "\n" + v.site_packages)
    throw std::runtime_error("the copied interpreter in " + v.root + " reports " + check.out);
  return v;
}

RunResult Venv::pip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"/usr/bin/env",         "PYTHONPATH=" + pip_shim(),
                                   "PIP_NO_INPUT=1",       "PIP_DISABLE_PIP_VERSION_CHECK=1",
                                   "PIP_ROOT_USER_ACTION=ignore", python, "-m", "pip"};
  argv.insert(argv.end(), args.begin(), args.end());
  return must_run(argv);
}

void Venv::install(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"install", "--no-index", "--no-deps", "--quiet"};
  argv.insert(argv.end(), args.begin(), args.end());
  // Wheels into a fresh venv: what pip leaves in site-packages depends on nothing else,
  // so the first test's real pip install is kept and the next ones copy it (pip's start
  // is most of a small test's time).
  std::optional<std::string> key = fresh_install_key(*this, args);
  if (!key) {
    pip(argv);
    return;
  }
  std::string made = cached_folder("installs", *key, [&](const std::string& into) {
    pip(argv);
    copy_tree(site_packages, into);
  });
  if (fs::is_empty(site_packages)) {
    copy_tree(made, site_packages);
    point_direct_urls(site_packages, args);
  }
}

void Venv::install(const std::string& wheel) const { install(std::vector<std::string>{wheel}); }

void Venv::upgrade(const std::string& wheel) const {
  install(std::vector<std::string>{"--upgrade", wheel});
}

void Venv::uninstall(const std::string& name) const { pip({"uninstall", "-y", "--quiet", name}); }

RunResult Venv::run_python(const std::string& code) const {
  return sitepatch::util::run({python, "-c", code});
}

std::string old_python_script() {
  // The agent is started as `python -I -S -u -c CODE`: CODE is the argument after -c.
  return "#!/bin/sh\nfor a; do if [ \"$prev\" = -c ]; then code=$a; fi; prev=$a; done\nexec " + outer_python() +
         " -u -c 'import sys; sys.version_info = (3, 6, 9, \"final\", 0); exec(sys.argv[1])' \"$code\"\n";
}

RunResult run_sitepatch(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env) {
  // env(1) sets the child's variables: removals first, then assignments.
  std::map<std::string, std::string> vars = {{"NO_COLOR", "1"}};
  for (auto& [k, v] : env) vars[k] = v;
  std::vector<std::string> argv = {"/usr/bin/env"};
  for (auto& [k, v] : vars)
    if (v.empty()) argv.insert(argv.end(), {"-u", k});
  for (auto& [k, v] : vars)
    if (!v.empty()) argv.push_back(k + "=" + v);
  argv.push_back(SITEPATCH_BIN);
  argv.insert(argv.end(), args.begin(), args.end());
  return sitepatch::util::run(argv);
}

}  // namespace testsupport
