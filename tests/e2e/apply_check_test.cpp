// Issue 29: apply --check imports every patched module in a fresh process after the
// write, apply --check-with CMD runs CMD; a failure rolls the apply back (pip's bytes
// again, the history keeping both) and exits 1 with the check's output.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "e2e_support.hpp"
#include "sitepatch/util/process.hpp"

namespace {

// The bundled recipe with one more edit whose import cannot succeed.
const char* kBreaksImport = R"(id: breaks-import
edits:
  - module: flashinfer.jit.cpp_ext
    function: get_cuda_version
    replace-body: |
      return Version(torch.version.cuda)
    ensure-import: import no_such_module_anywhere
)";

}  // namespace

TEST_CASE("apply --check rolls back an apply whose module no longer imports", "[e2e][apply]") {
  e2e::DemoEnv env;
  std::string recipe = env.tmp.path + "/breaks.yaml";
  testsupport::spit(recipe, kBreaksImport);
  // --force: apply would refuse the unbound import; the check is what catches it here.
  auto r = env.sp({"apply", "--force", "--check", recipe});
  INFO(r.out + r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("import flashinfer.jit.cpp_ext failed:\n") != std::string::npos);
  CHECK(r.err.find("No module named 'no_such_module_anywhere'") != std::string::npos);
  CHECK(r.err.find("sitepatch: check failed: importing the patched modules exited 1; rolled back breaks-import "
                   "(the history keeps the apply and its rollback)\n") != std::string::npos);
  CHECK(env.pristine());
  auto log = env.sp({"log"});
  CHECK(log.out.find("apply breaks-import") != std::string::npos);
  CHECK(log.out.find("rollback breaks-import") != std::string::npos);
  CHECK(env.sp({"list"}).out.find("breaks-import") == std::string::npos);
}

TEST_CASE("apply --check keeps an apply whose modules import", "[e2e][apply]") {
  e2e::DemoEnv env;
  auto r = env.sp({"apply", "--check", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.out + r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("check passed: importing the patched modules\n") != std::string::npos);
  CHECK_FALSE(env.pristine());
  CHECK(env.sp({"verify"}).status == 0);
}

TEST_CASE("apply --check-with runs the command in the environment and rolls back when it fails", "[e2e][apply]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  SECTION("it passes: `python` is the environment's, and sees the patch") {
    auto r = env.sp({"apply", "--check-with",
                     "test \"$(python -c 'import sys; print(sys.prefix)')\" = \"$VIRTUAL_ENV\" && "
                     "python -c 'import inspect, flashinfer.jit.cpp_ext as m; "
                     "assert \"torch.version.cuda\" in inspect.getsource(m.get_cuda_version)'",
                     recipe});
    INFO(r.out + r.err);
    CHECK(r.status == 0);
    CHECK(r.err.find("check passed: `test") != std::string::npos);
    CHECK_FALSE(env.pristine());
  }
  SECTION("it fails: its output, then the rollback") {
    auto r = env.sp({"apply", "--check-with", "echo warming up; echo model server died >&2; exit 4", recipe});
    INFO(r.out + r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("warming up\nmodel server died\nsitepatch: check failed: `echo warming up; echo model server "
                     "died >&2; exit 4` exited 4; rolled back flashinfer-dynamo (the history keeps the apply and "
                     "its rollback)\n") != std::string::npos);
    CHECK(env.pristine());
  }
}

TEST_CASE("apply --dry-run --check checks nothing: nothing was written", "[e2e][apply]") {
  e2e::DemoEnv env;
  auto r = env.sp({"apply", "--dry-run", "--check-with", "exit 9", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(r.status == 0);
  CHECK(r.err.find("check") == std::string::npos);
  CHECK(env.pristine());
}

TEST_CASE("a --check-with command and what it started end when sitepatch is killed", "[e2e][apply]") {
  e2e::DemoEnv env;
  std::string pidfile = env.tmp.path + "/pids";
  // A server that outlives its shell: a child in the background, the shell waiting on it.
  sitepatch::util::Process sp({SITEPATCH_BIN, "--venv", env.venv.root, "apply", "--check-with",
                               "sleep 300 & echo $$ $! > " + pidfile + ".tmp; mv " + pidfile + ".tmp " + pidfile +
                                   "; wait",
                               e2e::bundled("flashinfer-dynamo.yaml")});
  for (int k = 0; k < 600 && !std::filesystem::exists(pidfile); ++k) ::usleep(50 * 1000);
  REQUIRE(std::filesystem::exists(pidfile));
  std::istringstream pids(testsupport::slurp(pidfile));
  pid_t shell = 0, server = 0;
  pids >> shell >> server;
  REQUIRE(shell > 0);
  REQUIRE(server > 0);
  REQUIRE(::kill(server, 0) == 0);
  ::kill(sp.pid(), SIGKILL);
  sp.wait();
  // Gone within a few seconds (the watch acts on end of file; the kernel reaps them).
  bool gone = false;
  for (int k = 0; k < 100 && !gone; ++k) {
    gone = ::kill(server, 0) != 0 && ::kill(shell, 0) != 0;
    if (!gone) ::usleep(50 * 1000);
  }
  CHECK(gone);
  // The check never passed: the apply is no patch to report healthy. Every read command
  // says so (exit 3, with the command that settles it) ...
  auto status = env.sp({"status"});
  CHECK(status.status == 3);
  CHECK(status.out.find("flashinfer-dynamo  check never passed") != std::string::npos);
  CHECK(status.out.find("the apply of flashinfer-dynamo was stopped while its check ran, and the check never "
                        "passed: sitepatch --venv " + env.venv.root + " rollback flashinfer-dynamo undoes it") !=
        std::string::npos);
  auto list = env.sp({"list"});
  CHECK(list.status == 3);
  CHECK(list.out.find("unfinished (checking)") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 3);
  // ... and the command status gives settles it.
  auto fix = env.sp({"rollback", "flashinfer-dynamo"});
  INFO(fix.err);
  CHECK(fix.status == 0);
  CHECK(env.pristine());
  CHECK(env.sp({"status"}).status == 0);
}

namespace {

/// sitepatch apply --check-with a command that says it started, then waits; the signal
/// `sig` once it has. Returns sitepatch's exit status, its stderr, and the check's pid.
struct Stopped {
  int status;
  std::string err;
  pid_t check;
  double seconds;
};

Stopped stop_during_check(const e2e::DemoEnv& env, int sig, const std::vector<std::string>& recipes) {
  std::string pidfile = env.tmp.path + "/check.pid";
  std::filesystem::remove(pidfile);
  std::vector<std::string> argv = {SITEPATCH_BIN, "--venv", env.venv.root, "apply", "--check-with",
                                   "echo $$ > " + pidfile + ".tmp; mv " + pidfile + ".tmp " + pidfile + "; sleep 300"};
  argv.insert(argv.end(), recipes.begin(), recipes.end());
  sitepatch::util::Process sp(argv);
  for (int k = 0; k < 600 && !std::filesystem::exists(pidfile); ++k) ::usleep(50 * 1000);
  REQUIRE(std::filesystem::exists(pidfile));
  pid_t check = std::stoi(testsupport::slurp(pidfile));
  auto t0 = std::chrono::steady_clock::now();
  ::kill(sp.pid(), sig);
  int status = sp.wait();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {status, sp.stderr_text(), check, seconds};
}

}  // namespace

TEST_CASE("SIGINT, SIGTERM or SIGHUP while --check-with runs: the check ends, the apply is rolled back",
          "[e2e][apply]") {
  e2e::DemoEnv env;
  std::string other = env.recipe("other.yaml", "id: other\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                               "    function: get_cuda_path\n    replace-body: return '/opt/cuda'\n");
  for (auto [sig, name] : {std::pair{SIGINT, "SIGINT"}, {SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"}}) {
    INFO(name);
    auto r = stop_during_check(env, sig, {e2e::bundled("flashinfer-dynamo.yaml"), other});
    INFO(r.err);
    CHECK(r.status == 128 + sig);
    CHECK(r.seconds < 20);
    CHECK(::kill(r.check, 0) != 0);  // the check is gone
    CHECK(r.err.find(std::string("sitepatch: interrupted by ") + name + " while `echo") != std::string::npos);
    CHECK(r.err.find("; rolled back other, flashinfer-dynamo: a check that never passed keeps nothing\n") !=
          std::string::npos);
    CHECK(env.pristine());
    auto status = env.sp({"status"});
    CHECK(status.status == 0);
    CHECK(status.out.find("no patches applied") != std::string::npos);
  }
  auto log = env.sp({"log"});
  CHECK(log.out.find("apply flashinfer-dynamo, other: written, checking") != std::string::npos);
  CHECK(log.out.find("rollback other, flashinfer-dynamo") != std::string::npos);
}

TEST_CASE("a check that passes marks the apply applied in one more commit", "[e2e][apply]") {
  e2e::DemoEnv env;
  auto r = env.sp({"apply", "--check-with", "true", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto log = env.sp({"log"});
  CHECK(log.out.find("checked flashinfer-dynamo: the check after its apply passed") != std::string::npos);
  CHECK(log.out.find("apply flashinfer-dynamo: written, checking") != std::string::npos);
  auto list = env.sp({"list"});
  CHECK(list.status == 0);
  CHECK(list.out.find("unfinished") == std::string::npos);
}

TEST_CASE("the next writer rolls back an apply whose check a killed sitepatch never finished", "[e2e][apply]") {
  e2e::DemoEnv env;
  std::string pidfile = env.tmp.path + "/check.pid";
  {
    sitepatch::util::Process sp({SITEPATCH_BIN, "--venv", env.venv.root, "apply", "--check-with",
                                 "echo $$ > " + pidfile + ".tmp; mv " + pidfile + ".tmp " + pidfile + "; sleep 300",
                                 e2e::bundled("flashinfer-dynamo.yaml")});
    for (int k = 0; k < 600 && !std::filesystem::exists(pidfile); ++k) ::usleep(50 * 1000);
    REQUIRE(std::filesystem::exists(pidfile));
    ::kill(sp.pid(), SIGKILL);
    sp.wait();
  }
  std::string other = env.recipe("other.yaml", "id: other\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                               "    function: get_cuda_path\n    replace-body: return '/opt/cuda'\n");
  auto r = env.sp({"apply", other});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("rolled back flashinfer-dynamo: the check after its apply never passed (the sitepatch that ran "
                   "it was stopped); apply it again to check it again") != std::string::npos);
  auto list = env.sp({"list"});
  CHECK(list.status == 0);
  CHECK(list.out.find("flashinfer-dynamo") == std::string::npos);
  CHECK(list.out.find("other") != std::string::npos);
  CHECK(env.read("flashinfer/fp4_quantization.py") == env.installed.at("fp4_quantization.py"));
}
