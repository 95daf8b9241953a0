#include "support/fixture.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sitepatch/util/strings.hpp"

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

// Writes a wheel from a JSON spec on stdin; prints its path.
const char* kBuildWheel = R"PY(
import base64, csv, hashlib, io, json, os, re, sys, zipfile
spec = json.load(sys.stdin)
name, version = spec["name"], spec["version"]
escaped = re.sub(r"[-_.]+", "_", name)
dist_info = "%s-%s.dist-info" % (escaped, version)
files = [(rel, base64.b64decode(data)) for rel, data in sorted(spec["files"].items())]
files.append((dist_info + "/METADATA", (
    "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: test package\n\n"
    "Long description.\nName: not-this\n" % (name, version)).encode()))
files.append((dist_info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: sitepatch-tests\n"
              b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
record = io.StringIO()
writer = csv.writer(record, lineterminator="\n")
for rel, data in files:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    writer.writerow([rel, "sha256=" + digest, len(data)])
writer.writerow([dist_info + "/RECORD", "", ""])
path = os.path.join(spec["out_dir"], "%s-%s-py3-none-any.whl" % (escaped, version))
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    for rel, data in files:
        z.writestr(rel, data)
    z.writestr(dist_info + "/RECORD", record.getvalue())
print(path)
)PY";

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

}  // namespace

TempDir::TempDir() {
  char tmpl[] = "/tmp/sitepatch-test-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  char real[PATH_MAX];
  path = ::realpath(tmpl, real) ? real : tmpl;
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
  nlohmann::json j;
  j["name"] = spec.name;
  j["version"] = spec.version;
  j["out_dir"] = out_dir;
  j["files"] = nlohmann::json::object();
  for (auto& [rel, content] : spec.files) j["files"][rel] = sitepatch::util::base64_encode(content);
  fs::create_directories(out_dir);
  RunResult r = must_run({outer_python(), "-c", kBuildWheel}, j.dump());
  return sitepatch::util::trim(r.out);
}

const std::string& outer_python() {
  static std::string python = [] {
    const char* env = std::getenv("SITEPATCH_TEST_PYTHON");
    RunResult r = must_run({env && *env ? env : "python3", "-c", "import sys; print(sys.executable)"});
    return sitepatch::util::trim(r.out);
  }();
  return python;
}

Venv Venv::create(const std::string& dir) {
  must_run({outer_python(), "-m", "venv", "--without-pip", dir});
  Venv v;
  v.root = fs::absolute(dir).lexically_normal().string();
  v.python = v.root + "/bin/python";
  RunResult r = must_run({v.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
  v.site_packages = sitepatch::util::trim(r.out);
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
  pip(argv);
}

void Venv::install(const std::string& wheel) const { install(std::vector<std::string>{wheel}); }

void Venv::upgrade(const std::string& wheel) const {
  install(std::vector<std::string>{"--upgrade", wheel});
}

void Venv::uninstall(const std::string& name) const { pip({"uninstall", "-y", "--quiet", name}); }

RunResult Venv::run_python(const std::string& code) const {
  return sitepatch::util::run({python, "-c", code});
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
