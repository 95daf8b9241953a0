// Issue 51 item 9: a warm run, the client and server alone (no search): the same exit
// status, stdout and stderr as the same command run cold, for a program that ends by an
// exception, by sys.exit(3) and by sys.exit("message"); and a run whose manifest patches
// a module the server imported goes cold in the forked process, saying why.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "sitepatch/util/process.hpp"
#include "support/torch_env.hpp"

namespace {

namespace fs = std::filesystem;
const std::string kProofs = std::string(SITEPATCH_SOURCE_DIR) + "/src/engine/proofs/";

// A run folder as explain --run makes one (the hook, the client, the server, the child)
// in a private run root, and the torch venv whose Python runs it.
struct WarmEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string root, folder, app;
  WarmEnv() : venv(testsupport::torch_venv(tmp.path + "/venv")), root(tmp.path + "/run"), folder(root + "/r1"),
              app(tmp.path + "/app") {
    fs::create_directories(folder);
    fs::create_directories(app);
    ::chmod(root.c_str(), 0700);
    fs::copy_file(kProofs + "try_hook.py", folder + "/sitecustomize.py");
    for (auto name : {"warm_client.py", "warm_server.py", "warm_child.py"}) fs::copy_file(kProofs + name, folder + "/" + name);
    testsupport::spit(app + "/prog.py", "import sys\nimport torch\nprint('out', sys.argv[1:])\nsys.stdout.flush()\n"
                                        "if sys.argv[1] == 'raise':\n    raise ValueError('boom')\n"
                                        "if sys.argv[1] == 'three':\n    sys.exit(3)\nsys.exit('said ' + sys.argv[1])\n");
  }
  // The program, cold (python itself) or warm (the client), in the runs' environment.
  sitepatch::util::RunResult run(bool warm, const std::string& arg, const std::string& manifest = "") const {
    std::string boot = "import os;p=os.environ['SITEPATCH_WARM_CLIENT'];exec(compile(open(p,'rb').read(),p,'exec'),"
                       "{'__file__':p,'__name__':'sitepatch_warm_client'})";
    std::vector<std::string> argv = {"/usr/bin/env", "VIRTUAL_ENV=" + venv.root,
                                     "PATH=" + venv.root + "/bin:/usr/bin:/bin", "PYTHONPATH=" + folder,
                                     "SITEPATCH_WARM_CLIENT=" + folder + "/warm_client.py",
                                     "SITEPATCH_WARM_SESSION=childtest", "SITEPATCH_TRY_QUIET=1",
                                     "SITEPATCH_TRY=" + manifest, "sh", "-c",
                                     warm ? "cd \"$0\" && exec python -E -S -c \"$1\" python prog.py \"$2\""
                                          : "cd \"$0\" && exec python prog.py \"$2\"",
                                     app, boot, arg};
    return sitepatch::util::run(argv);
  }
  void stop() const {
    sitepatch::util::run({"/usr/bin/env", "SITEPATCH_WARM_CLIENT=" + folder + "/warm_client.py",
                          "SITEPATCH_WARM_SESSION=childtest", venv.python, "-E", "-S", "-c",
                          "import os;p=os.environ['SITEPATCH_WARM_CLIENT'];exec(compile(open(p,'rb').read(),p,'exec'),"
                          "{'__file__':p,'__name__':'sitepatch_warm_client'})",
                          "--stop"});
  }
};

std::string first_line_off(std::string& err) {
  size_t end = err.find('\n');
  std::string line = err.substr(0, end);
  err.erase(0, end + 1);
  return line;
}

}  // namespace

TEST_CASE("a warm run ends as the cold one: status, stdout and stderr alike", "[e2e][explain][torch][warm]") {
  WarmEnv env;
  for (const char* arg : {"raise", "three", "message"}) {
    INFO(arg);
    auto cold = env.run(false, arg);
    auto warm = env.run(true, arg);
    INFO(cold.err + "\n---\n" + warm.err);
    CHECK(first_line_off(warm.err) == "sitepatch-run: warm");
    CHECK(warm.status == cold.status);
    CHECK(warm.out == cold.out);
    CHECK(warm.err == cold.err);
  }
  env.stop();
  CHECK(!fs::exists(env.root + "/sitepatch-warm-childtest"));
}

TEST_CASE("a warm run whose manifest patches a module the server imported goes cold, in the same process",
          "[e2e][explain][torch][warm]") {
  WarmEnv env;
  // The server first (a run that needs it), then a run patching torch.nn, which it imported.
  REQUIRE(env.run(true, "three").status == 3);
  std::string manifest = env.tmp.path + "/try.manifest";
  testsupport::spit(manifest, "sitepatch-try 1\n/nonexistent/torch/nn/__init__.py\ntorch.nn\n" + std::string(64, '0') +
                                  "\n0\n");
  auto cold = env.run(false, "raise", manifest);
  auto warm = env.run(true, "raise", manifest);
  INFO(warm.err);
  CHECK(first_line_off(warm.err) == "sitepatch-run: cold: the warm server had imported torch.nn, which this run patches");
  CHECK(warm.status == 1);
  CHECK(warm.out == cold.out);
  CHECK(warm.err == cold.err);
  env.stop();
}
