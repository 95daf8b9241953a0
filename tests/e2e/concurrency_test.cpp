// Writers on one environment are serialized by the lock in its state folder.
#include <catch2/catch.hpp>

#include <future>

#include "e2e_support.hpp"

TEST_CASE("two applies at once on one file both land, one after the other", "[e2e]") {
  e2e::DemoEnv env;
  auto a = env.recipe("a.yaml",
                      "id: a\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: get_cuda_version\n"
                      "    replace-body: return Version(torch.version.cuda)\n");
  auto b = env.recipe("b.yaml",
                      "id: b\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: get_cuda_path\n"
                      "    replace-body: return '/opt/cuda'\n");
  for (int round = 0; round < 3; ++round) {
    auto fa = std::async(std::launch::async, [&] { return env.sp({"apply", a}); });
    auto fb = std::async(std::launch::async, [&] { return env.sp({"apply", b}); });
    auto ra = fa.get(), rb = fb.get();
    INFO(ra.err << rb.err);
    REQUIRE(ra.status == 0);
    REQUIRE(rb.status == 0);
    std::string text = env.read("flashinfer/jit/cpp_ext.py");
    CHECK(text.find("return Version(torch.version.cuda)") != std::string::npos);
    CHECK(text.find("return '/opt/cuda'") != std::string::npos);
    CHECK(env.sp({"verify"}).status == 0);
    REQUIRE(env.sp({"rollback", "--all"}).status == 0);
    CHECK(env.pristine());
  }
}

TEST_CASE("a writer waits for the lock, then gives up naming it", "[e2e]") {
  e2e::DemoEnv env;
  std::string lock = env.venv.root + "/.sitepatch/sitepatch.lock";
  testsupport::spit(lock, "");
  // Another process holds the lock for two seconds.
  sitepatch::util::Process holder(
      {env.venv.python, "-c",
       "import fcntl, sys, time\n"
       "f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(2)\n",
       lock});
  std::string line;
  REQUIRE(holder.read_line(line));
  REQUIRE(line == "held");
  auto r = env.sp({"--lock-timeout", "0.2", "apply", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: another sitepatch is working on this environment (lock " + lock +
                     " held); try again later\n");
  CHECK(env.pristine());
  // plan takes no lock: reading is never blocked.
  CHECK(env.sp({"plan", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  holder.wait();
  CHECK(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
}
