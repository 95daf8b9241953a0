#include "torch_env.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"

namespace testsupport {

namespace fs = std::filesystem;

namespace {

std::string folder() {
  if (const char* set = std::getenv("SITEPATCH_TEST_TORCH_VENV"); set && *set) return set;
  auto r = sitepatch::util::run({outer_python(), "-c", "import sys; print('%d%d' % sys.version_info[:2])"});
  std::string tag = sitepatch::util::trim(r.out);
  const char* cache = std::getenv("XDG_CACHE_HOME");
  std::string base = cache && *cache ? cache : std::string(std::getenv("HOME")) + "/.cache";
  return base + "/sitepatch-tests/torch-2.13.0-py" + tag;
}

std::string make() {
  std::string dir = folder();
  fs::create_directories(fs::path(dir).parent_path());
  int fd = ::open((dir + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || ::flock(fd, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + dir + ".lock");
  std::string site;
  std::string done = dir + "/.complete";
  if (!fs::exists(done)) {
    fs::remove_all(dir);
    auto venv = sitepatch::util::run({outer_python(), "-m", "venv", dir});
    if (venv.status != 0) throw std::runtime_error("python -m venv " + dir + ": " + venv.err);
    auto pip = sitepatch::util::run({dir + "/bin/python", "-m", "pip", "install", "-q", "torch==2.13.0"});
    if (pip.status != 0) throw std::runtime_error("pip install torch==2.13.0 into " + dir + ": " + pip.err);
    spit(done, "torch==2.13.0\n");
  }
  auto r = sitepatch::util::run({dir + "/bin/python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
  site = sitepatch::util::trim(r.out);
  ::flock(fd, LOCK_UN);
  ::close(fd);
  if (site.empty()) throw std::runtime_error("no site-packages in " + dir);
  return site;
}

}  // namespace

const std::string& torch_site_packages() {
  static const std::string site = make();
  return site;
}

Venv torch_venv(const std::string& dir) {
  Venv v = Venv::create(dir);
  spit(v.site_packages + "/shared_torch.pth", torch_site_packages() + "\n");
  return v;
}

}  // namespace testsupport
