// audit on real third-party code: Debian's python3-torch (1.13) in
// /usr/lib/python3/dist-packages, through the system Python. Each expected chain was
// traced by hand in the sources (the line where each step makes the next call).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <set>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"

namespace {

const char* const kTorch = "/usr/lib/python3/dist-packages/torch/utils/cpp_extension.py";

bool have_torch() {
  struct stat st;
  return ::stat(kTorch, &st) == 0 && ::stat("/usr/bin/python3", &st) == 0;
}

// Every chain of `entry` as "module:function:line > ... > operation".
std::set<std::string> chains_of(const std::string& entry, nlohmann::json* doc = nullptr) {
  auto r = testsupport::run_sitepatch({"--venv", "/usr/bin/python3", "--json", "audit", entry});
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  std::set<std::string> out;
  for (auto& c : j["chains"]) {
    std::string s;
    for (auto& st : c["steps"]) s += st["function"].get<std::string>() + ":" + std::to_string(st["line"].get<int>()) + " > ";
    out.insert(s + c["operation"].get<std::string>());
  }
  if (doc) *doc = j;
  return out;
}

}  // namespace

TEST_CASE("audit finds the hand-traced chains in Debian's torch 1.13", "[e2e][audit][torch]") {
  // scripts/setup.sh installs python3-torch for the tests.
  REQUIRE(have_torch());
  const std::string ext = "torch.utils.cpp_extension:";
  nlohmann::json doc;
  auto load = chains_of("torch.utils.cpp_extension:load", &doc);
  // load() -> _jit_compile() -> the ninja build, in a subprocess.
  CHECK(load.count(ext + "load:1284 > " + ext + "_jit_compile:1508 > " + ext +
                   "_write_ninja_file_and_build_library:1623 > " + ext + "_run_ninja_build:1900 > subprocess.run"));
  // ... after asking whether ninja is there, in another one.
  CHECK(load.count(ext + "load:1284 > " + ext + "_jit_compile:1508 > " + ext +
                   "_write_ninja_file_and_build_library:1592 > " + ext + "verify_ninja_availability:1647 > " + ext +
                   "is_ninja_available:1635 > subprocess.check_output"));
  // Its file baton: `baton = FileBaton(...)`, and a process that lost the race waits
  // on it (`baton.wait()`), polling the file system and sleeping.
  const std::string wait = ext + "load:1284 > " + ext + "_jit_compile:1522 > torch.utils.file_baton:FileBaton.wait:";
  CHECK(load.count(wait + "41 > os.path.exists"));
  CHECK(load.count(wait + "42 > time.sleep"));
  // The build folder is checked and made before anything is compiled.
  CHECK(load.count(ext + "load:1291 > " + ext + "_get_build_directory:1841 > os.path.exists"));
  CHECK(load.count(ext + "load:1291 > " + ext + "_get_build_directory:1845 > os.makedirs"));
  // The answer says how complete it is.
  CHECK(doc["complete"] == false);
  CHECK(doc["conclusion"].get<std::string>().find(" could not be followed (-v lists them), so there may be more") !=
        std::string::npos);
  // _appdirs' Windows branch (`system = sys.platform`, then `if system == "win32":`)
  // imports modules Linux does not have: it cannot run here, so it is not read.
  CHECK(doc["conclusion"].get<std::string>().find("not installed") == std::string::npos);
  CHECK(doc["not_installed"].empty());

  // collect_env stores `run` in a variable (`run_lambda = run`, no call) and hands it down;
  // the shortest chain that calls it goes through get_gpu_info; run() spawns.
  const std::string env = "torch.utils.collect_env:";
  auto info = chains_of("torch.utils.collect_env:get_pretty_env_info");
  CHECK(info.count(env + "get_pretty_env_info:483 > " + env + "get_env_info:360 > " + env + "get_gpu_info:142 > " + env +
                   "run:52 > subprocess.Popen"));

  auto hub = chains_of("torch.hub:load");
  CHECK(hub.count("torch.hub:load:539 > torch.hub:_get_cache_or_reload:177 > os.path.exists"));
  CHECK(hub.count("torch.hub:load:539 > torch.hub:_get_cache_or_reload:178 > os.makedirs"));

  // No mention is taken for an operation (subprocess.PIPE at collect_env.py:52-53,
  // `except subprocess.CalledProcessError` at cpp_extension.py:1907).
  for (auto* set : {&load, &info, &hub})
    for (auto& c : *set) {
      INFO(c);
      CHECK(c.find("PIPE") == std::string::npos);
      CHECK(c.find("STDOUT") == std::string::npos);
      CHECK(c.find("CalledProcessError") == std::string::npos);
    }
}
