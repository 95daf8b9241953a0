#include "wheel_support.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace e2e {

namespace fs = std::filesystem;

WheelCase::WheelCase()
    : source(data_wheel("flashinfer-python", "0.5.3", tmp.path + "/src")), recipe(bundled("flashinfer-dynamo.yaml")) {}

sitepatch::util::RunResult WheelCase::build(const std::string& out, const std::vector<std::string>& more,
                                            const std::map<std::string, std::string>& env) const {
  fs::create_directories(out);
  std::vector<std::string> args = {"wheel", recipe, "--from", source, "-o", out};
  args.insert(args.end(), more.begin(), more.end());
  return testsupport::run_sitepatch(args, env);
}

std::string wheel_problems(const std::string& path) {
  const char* code = R"PY(
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
record = [n for n in names if n.endswith(".dist-info/RECORD")]
problems = []
if len(record) != 1 or names[-1] != record[0]:
    problems.append("RECORD is not the one last member: %r" % names[-3:])
rows = {r[0]: r for r in csv.reader(io.StringIO(z.read(record[0]).decode()))}
for info in z.infolist():
    if info.date_time != (1980, 1, 1, 0, 0, 0):
        problems.append("%s dated %r" % (info.filename, info.date_time))
    if info.filename == record[0]:
        continue
    data = z.read(info.filename)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    row = rows.get(info.filename)
    if not row or row[1] != want or row[2] != str(len(data)):
        problems.append("%s: RECORD says %r, its bytes %s,%d" % (info.filename, row, want, len(data)))
print("\n".join(problems))
)PY";
  auto r = sitepatch::util::run({testsupport::outer_python(), "-c", code, path});
  if (r.status != 0) return "the check failed: " + r.err;
  return sitepatch::util::trim(r.out);
}

std::string wheel_member(const std::string& path, const std::string& member) {
  auto r = sitepatch::util::run({testsupport::outer_python(), "-c",
                                 "import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))",
                                 path, member});
  if (r.status != 0) throw std::runtime_error("no member " + member + " in " + path + ": " + r.err);
  return r.out;
}

std::string wheel_schema_violations(const std::string& document) {
  auto r = sitepatch::util::run({"/usr/bin/python3", std::string(SITEPATCH_SOURCE_DIR) + "/tests/support/validate_schema.py",
                                 std::string(SITEPATCH_SOURCE_DIR) + "/docs/schema/wheel.json", "-"},
                                document);
  return r.status != 0 && r.out.empty() ? "validate_schema.py failed: " + r.err : r.out;
}

const std::string& uv_binary() {
  static const std::string uv = [] {
    const char* cache = std::getenv("XDG_CACHE_HOME");
    std::string dir = (cache && *cache ? cache : std::string(std::getenv("HOME")) + "/.cache") +
                      "/sitepatch-tests/uv-0.9.5";
    fs::create_directories(fs::path(dir).parent_path());
    int fd = ::open((dir + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + dir + ".lock");
    if (!fs::exists(dir + "/.complete")) {
      fs::remove_all(dir);
      auto venv = sitepatch::util::run({testsupport::outer_python(), "-m", "venv", dir});
      if (venv.status != 0) throw std::runtime_error("python -m venv " + dir + ": " + venv.err);
      auto pip = sitepatch::util::run({dir + "/bin/python", "-m", "pip", "install", "-q", "uv==0.9.5"});
      if (pip.status != 0) throw std::runtime_error("pip install uv==0.9.5 into " + dir + ": " + pip.err);
      testsupport::spit(dir + "/.complete", "uv==0.9.5\n");
    }
    ::close(fd);
    return dir + "/bin/uv";
  }();
  return uv;
}

}  // namespace e2e
