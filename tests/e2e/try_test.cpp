// Issue 29: `sitepatch try RECIPE... -- CMD` runs CMD with the recipes in effect for it
// and every Python process it starts, and writes nothing to the environment.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "support/sshd.hpp"

namespace fs = std::filesystem;

namespace {

const char* kProbe = R"(import subprocess


def get_cuda_version():
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True)
    return out.stdout


def answer():
    return "unpatched"
)";

const char* kCli = R"(import probe

print("cli:", probe.answer())
)";

const char* kProbeFixRecipe = R"(id: probe-fix
edits:
  - module: probe
    function: answer
    replace-body: |
      return "patched"
)";

struct TryEnv {
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::string recipe;
  TryEnv() : venv(testsupport::Venv::create(tmp.path + "/venv")), recipe(tmp.path + "/fix.yaml") {
    testsupport::spit(venv.site_packages + "/probe/__init__.py", kProbe);
    testsupport::spit(venv.site_packages + "/probe/cli.py", kCli);
    testsupport::spit(recipe, kProbeFixRecipe);
  }
  sitepatch::util::RunResult sp(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--venv", venv.root});
    return testsupport::run_sitepatch(args);
  }
  sitepatch::util::RunResult try_python(const std::string& code) const {
    return sp({"try", recipe, "--", venv.python, "-c", code});
  }
};

}  // namespace

TEST_CASE("try runs a command with the recipe in effect and writes nothing", "[e2e][try]") {
  TryEnv env;
  auto before = e2e::tree_state(env.venv.root);
  auto r = env.try_python("import probe, inspect, sys; print(probe.answer()); print(inspect.getsource(probe.answer)); "
                          "sys.exit(7)");
  INFO(r.out + r.err);
  CHECK(r.status == 7);  // the command's own exit status
  CHECK(r.out == "patched\ndef answer():\n    return \"patched\"\n\n");
  CHECK(r.err == "sitepatch try: probe/__init__.py patched for this run; the environment is not written\n");
  // Byte for byte: no __pycache__, no history, no marker, the file as it was.
  CHECK(e2e::tree_state(env.venv.root) == before);
  CHECK(env.venv.run_python("import probe; print(probe.answer())").out == "unpatched\n");
}

TEST_CASE("try reaches every Python process the command starts", "[e2e][try]") {
  TryEnv env;
  auto before = e2e::tree_state(env.venv.root);
  SECTION("subprocess") {
    auto r = env.try_python(
        "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import probe; print(probe.answer())'])");
    INFO(r.err);
    CHECK(r.out == "patched\n");
  }
  SECTION("multiprocessing, spawn") {
    // A file: spawn's child imports the parent's __main__ again, which `-c` has not.
    std::string script = env.tmp.path + "/spawn.py";
    testsupport::spit(script,
                      "import multiprocessing as mp\n"
                      "def work(q):\n"
                      "    import probe; q.put(probe.answer())\n"
                      "if __name__ == '__main__':\n"
                      "    ctx = mp.get_context('spawn'); q = ctx.Queue(); p = ctx.Process(target=work, args=(q,))\n"
                      "    p.start(); print(q.get(timeout=120)); p.join()\n");
    auto r = env.sp({"try", env.recipe, "--", env.venv.python, script});
    INFO(r.err);
    CHECK(r.out == "patched\n");
  }
  SECTION("python -m, a module of the patched package") {
    auto r = env.sp({"try", env.recipe, "--", env.venv.python, "-m", "probe.cli"});
    INFO(r.err);
    CHECK(r.out == "cli: patched\n");
  }
  SECTION("a shell in between") {
    auto r = env.sp({"try", env.recipe, "--", "sh", "-c", env.venv.python + " -c 'import probe; print(probe.answer())'"});
    INFO(r.err);
    CHECK(r.out == "patched\n");
  }
  CHECK(e2e::tree_state(env.venv.root) == before);
}

TEST_CASE("try keeps the environment's own sitecustomize", "[e2e][try]") {
  TryEnv env;
  testsupport::spit(env.venv.site_packages + "/sitecustomize.py", "import builtins\nbuiltins.SITE_MARK = 'site'\n");
  auto r = env.try_python("import probe, builtins; print(probe.answer(), builtins.SITE_MARK)");
  INFO(r.err);
  CHECK(r.out == "patched site\n");
}

TEST_CASE("try says where its hook cannot reach, and runs those unpatched", "[e2e][try]") {
  TryEnv env;
  SECTION("a module a .pth file imports before sitecustomize runs") {
    testsupport::spit(env.venv.site_packages + "/early.pth", "import probe\n");
    auto r = env.try_python("import probe; print(probe.answer())");
    CHECK(r.out == "unpatched\n");
    CHECK(r.err.find("sitepatch try: probe was imported before the patch could take effect (by a .pth file?); "
                     "this process runs it unpatched\n") != std::string::npos);
  }
  SECTION("the same module loaded from another file") {
    testsupport::spit(env.tmp.path + "/other/probe/__init__.py", "def answer():\n    return 'other'\n");
    auto r = env.try_python("import sys; sys.path.insert(0, '" + env.tmp.path +
                            "/other'); import probe; print(probe.answer())");
    CHECK(r.out == "other\n");
    CHECK(r.err.find("sitepatch try: probe loads from " + env.tmp.path +
                     "/other/probe/__init__.py, not the file the recipes were planned against; running it "
                     "unpatched\n") != std::string::npos);
  }
  SECTION("python -I ignores PYTHONPATH: documented, and so it is") {
    auto r = env.sp({"try", env.recipe, "--", env.venv.python, "-I", "-c", "import probe; print(probe.answer())"});
    CHECK(r.out == "unpatched\n");
  }
}

TEST_CASE("try runs nothing when a recipe does not apply, and needs a command", "[e2e][try]") {
  TryEnv env;
  testsupport::spit(env.recipe, "id: probe-fix\nedits:\n  - module: probe\n    function: missing\n    replace-body: |\n"
                                "      return 1\n");
  std::string marker = env.tmp.path + "/ran";
  auto r = env.sp({"try", env.recipe, "--", "touch", marker});
  CHECK(r.status == 1);
  CHECK(r.err.find("sitepatch: try failed: the recipes do not apply; `touch " + marker + "` was not run\n") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(marker));

  auto none = env.sp({"try", env.recipe});
  CHECK(none.status == 2);
  CHECK(none.err.find("try needs the command to run after `--`, e.g. sitepatch try fix.yaml -- python serve.py") !=
        std::string::npos);

  testsupport::spit(env.tmp.path + "/good.yaml", kProbeFixRecipe);
  auto missing = env.sp({"try", env.tmp.path + "/good.yaml", "--", "no-such-command-here"});
  CHECK(missing.status == 1);
  CHECK(missing.err.find("cannot run no-such-command-here: No such file or directory") != std::string::npos);
}

TEST_CASE("try --json captures the command's output in the document", "[e2e][try]") {
  TryEnv env;
  auto r = env.sp({"--json", "try", env.recipe, "--", env.venv.python, "-c",
                   "import probe, sys; print(probe.answer()); print('to stderr', file=sys.stderr); sys.exit(3)"});
  INFO(r.out + r.err);
  CHECK(r.status == 3);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["ran"] == true);
  CHECK(j["status"] == 3);
  CHECK(j["stdout"] == "patched\n");
  CHECK(j["stderr"] == "to stderr\n");
  CHECK(j["files"] == nlohmann::json::array({"probe/__init__.py"}));
}

TEST_CASE("try works with the oldest and the newest Python supported", "[e2e][try]") {
  // 3.8: the oldest the agent (and so sitepatch) supports; the hook itself is 3.6-clean.
  for (std::string minor : {"3.8", "3.13"}) {
    INFO(minor);
    testsupport::TempDir tmp;
    auto venv = testsupport::venv_from(testsupport::pyenv_python(minor), tmp.path + "/venv", false);
    testsupport::spit(venv.site_packages + "/probe/__init__.py", kProbe);
    testsupport::spit(tmp.path + "/fix.yaml", kProbeFixRecipe);
    auto before = e2e::tree_state(venv.root);
    auto r = testsupport::run_sitepatch({"--venv", venv.root, "try", tmp.path + "/fix.yaml", "--", venv.python, "-c",
                                         "import probe, subprocess, sys; print(probe.answer()); sys.stdout.flush(); "
                                         "subprocess.run([sys.executable, '-c', 'import probe; print(probe.answer())'])"});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out == "patched\npatched\n");
    CHECK(e2e::tree_state(venv.root) == before);
  }
}

TEST_CASE("remote: try runs the command there over the one connection, and apply --check-with rolls back there",
          "[e2e][remote][try]") {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  testsupport::Venv venv = testsupport::Venv::create(sshd.local("/srv/venv"));
  testsupport::spit(venv.site_packages + "/probe/__init__.py", kProbe);
  testsupport::spit(tmp.path + "/fix.yaml", kProbeFixRecipe);
  auto sp = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", "/srv/venv"});
    return testsupport::run_sitepatch(args);
  };
  auto before = e2e::tree_state(venv.root);
  int connections = sshd.connections();
  // /srv/venv exists only there: the command ran on that host.
  auto r = sp({"try", tmp.path + "/fix.yaml", "--", "/srv/venv/bin/python", "-c",
               "import probe, sys; print(probe.answer()); sys.exit(5)"});
  INFO(r.err);
  CHECK(r.status == 5);
  CHECK(r.out == "patched\n");
  CHECK(sshd.connections() == connections + 1);
  CHECK(e2e::tree_state(venv.root) == before);

  // A command far longer than the silence sitepatch waits for (7 s against 3 s, which
  // the ssh start must also keep) runs to its end: the agent beats while it runs (each
  // 0.75 s); without them, "went silent".
  auto slow = testsupport::run_sitepatch({"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv",
                                          "/srv/venv", "try", tmp.path + "/fix.yaml", "--", "sh", "-c",
                                          "sleep 7; echo done"},
                                         {{"SITEPATCH_REPLY_TIMEOUT", "3"}});
  INFO(slow.err);
  CHECK(slow.status == 0);
  CHECK(slow.out == "done\n");

  auto checked = sp({"apply", "--check-with", "python -c 'import probe; assert probe.answer() == \"unpatched\"'",
                     tmp.path + "/fix.yaml"});
  INFO(checked.err);
  CHECK(checked.status == 1);
  CHECK(checked.err.find("AssertionError") != std::string::npos);
  CHECK(checked.err.find("rolled back probe-fix") != std::string::npos);
  CHECK(testsupport::slurp(venv.site_packages + "/probe/__init__.py") == kProbe);
}

TEST_CASE("try -- python runs the environment's Python, whatever is first on PATH", "[e2e][try]") {
  TryEnv env;
  // As the README writes it: `python`, the venv not activated (the machine's python3 first).
  auto r = testsupport::run_sitepatch(
      {"--venv", env.venv.root, "try", env.recipe, "--", "python", "-c",
       "import os, sys, probe; print(sys.prefix); print(os.environ['VIRTUAL_ENV']); print(probe.answer())"},
      {{"PATH", "/usr/bin:/bin"}, {"VIRTUAL_ENV", ""}});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == env.venv.root + "\n" + env.venv.root + "\npatched\n");
}

TEST_CASE("try --help's usage line shows the command after --", "[e2e][try]") {
  auto r = testsupport::run_sitepatch({"try", "--help"});
  CHECK(r.status == 0);
  CHECK(r.out.find("\nUsage: sitepatch try [OPTIONS] recipes... -- CMD [ARGS...]\n") != std::string::npos);
}
