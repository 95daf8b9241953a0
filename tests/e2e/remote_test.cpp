// Every command on another machine: a real sshd in its own network and mount
// namespaces, where the environment lives at /srv/venv — a path that does not exist
// on this side.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>

#include <nlohmann/json.hpp>

#include "e2e_support.hpp"
#include "sitepatch/engine/engine.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "support/forwarding_host.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"
#include "support/sshd.hpp"

namespace {

struct RemoteDemo {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  testsupport::Venv venv;
  std::map<std::string, std::string> installed;

  explicit RemoteDemo(const std::string& remote_venv = "/srv/venv")
      : venv(testsupport::Venv::create(sshd.local(remote_venv))), remote(remote_venv) {
    std::string wheels = tmp.path + "/wheels";
    venv.install({e2e::data_wheel("torch", "2.9.0", wheels), e2e::data_wheel("packaging", "24.0", wheels),
                  e2e::data_wheel("flashinfer-python", "0.5.3", wheels)});
    installed = e2e::read_tree(venv.site_packages + "/flashinfer");
  }
  std::string remote;
  sitepatch::util::RunResult sp(std::vector<std::string> args,
                                const std::map<std::string, std::string>& vars = {}) const {
    args.insert(args.begin(), {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", remote});
    return testsupport::run_sitepatch(args, vars);
  }
  std::string read(const std::string& rel) const { return testsupport::slurp(venv.site_packages + "/" + rel); }
  bool pristine() const { return e2e::read_tree(venv.site_packages + "/flashinfer") == installed; }
};

}  // namespace

TEST_CASE("remote: plan, apply, list, verify, rollback over one connection each", "[e2e][remote]") {
  RemoteDemo env;
  REQUIRE_FALSE(std::filesystem::exists("/srv/venv"));
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");

  int before = env.sshd.connections();
  auto plan = env.sp({"plan", recipe});
  INFO(plan.err);
  REQUIRE(plan.status == 0);
  CHECK(plan.out == testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/patches/flashinfer-dynamo.diff"));
  CHECK(env.sshd.connections() == before + 1);
  CHECK_FALSE(std::filesystem::exists(env.sshd.local("/srv/venv/.sitepatch")));

  auto apply = env.sp({"-v", "apply", recipe});
  INFO(apply.err);
  REQUIRE(apply.status == 0);
  CHECK(env.sshd.connections() == before + 2);
  CHECK(apply.err.find("ssh: 1 connection to " + env.sshd.target()) != std::string::npos);
  CHECK(env.read("flashinfer/jit/cpp_ext.py").find("return Version(torch.version.cuda)") != std::string::npos);
  CHECK(apply.err.find("history in /srv/venv/.sitepatch") != std::string::npos);

  // The history lives over there, readable by plain git.
  auto git = sitepatch::util::run({"git", "--git-dir", env.sshd.local("/srv/venv/.sitepatch"), "log", "--format=%s"});
  CHECK(git.out == "apply flashinfer-dynamo\napply flashinfer-dynamo: originals saved, writing\n");

  auto list = env.sp({"list"});
  CHECK(list.status == 0);
  CHECK(list.out.find("flashinfer-dynamo  flashinfer-python==0.5.3") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);
  CHECK(env.sp({"show", "flashinfer-dynamo"}).out == plan.out);

  auto rb = env.sp({"rollback", "flashinfer-dynamo"});
  INFO(rb.err);
  REQUIRE(rb.status == 0);
  CHECK(env.pristine());
  CHECK(env.sp({"list"}).out == "no patches applied in /srv/venv\n");
}

TEST_CASE("remote: round trips do not grow with the number of files", "[e2e][remote]") {
  RemoteDemo env;
  // Twenty more modules, so one recipe can touch 2 files and another 20.
  testsupport::WheelSpec many{"manymods", "1.0", {{"manymods/__init__.py", ""}}};
  std::string small_recipe = "id: small\nedits:\n", big_recipe = "id: big\nedits:\n";
  for (int i = 0; i < 20; ++i) {
    std::string m = "manymods.m" + std::to_string(i);
    many.files["manymods/m" + std::to_string(i) + ".py"] = "def f():\n    return " + std::to_string(i) + "\n";
    std::string edit = "  - module: " + m + "\n    function: f\n    replace-body: return -1\n";
    big_recipe += edit;
    if (i < 2) small_recipe += edit;
  }
  env.venv.install(testsupport::build_wheel(many, env.tmp.path));
  testsupport::spit(env.tmp.path + "/small.yaml", small_recipe);
  testsupport::spit(env.tmp.path + "/big.yaml", big_recipe);
  auto trips = [](const std::string& err) {
    auto at = err.find(" round trip(s)");
    auto from = err.rfind(", ", at);
    return std::stoi(err.substr(from + 2, at - from - 2));
  };
  // A first apply makes the history; measure the ones after it.
  REQUIRE(env.sp({"apply", env.tmp.path + "/small.yaml"}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  // Bytecode to remove in both runs, so both make the same requests.
  auto compileall = [&] {
    REQUIRE(sitepatch::util::run({env.venv.python, "-m", "compileall", "-q", env.venv.site_packages}).status == 0);
  };
  int connections = env.sshd.connections();
  compileall();
  auto small = env.sp({"-v", "apply", env.tmp.path + "/small.yaml"});
  REQUIRE(small.status == 0);
  auto small_rb = env.sp({"-v", "rollback", "--all"});
  REQUIRE(small_rb.status == 0);
  compileall();
  auto big = env.sp({"-v", "apply", env.tmp.path + "/big.yaml"});
  INFO(big.err);
  REQUIRE(big.status == 0);
  auto big_rb = env.sp({"-v", "rollback", "--all"});
  REQUIRE(big_rb.status == 0);
  CHECK(trips(big.err) == trips(small.err));
  CHECK(trips(big_rb.err) == trips(small_rb.err));
  // What is read ahead comes in the waits the command has anyway (the files to patch
  // with the history's, pip's RECORD with the originals' commit, the undone files with
  // their owners'); a change that adds a wait shows here.
  CHECK(trips(small.err) == 9);
  CHECK(trips(small_rb.err) == 8);
  CHECK(env.sshd.connections() == connections + 4);
}

TEST_CASE("remote: a host that refuses the key, and a port nobody listens on", "[e2e][remote]") {
  RemoteDemo env;
  auto r = testsupport::run_sitepatch({"--host", env.sshd.target(), "--ssh-command", env.sshd.stranger_ssh_command(),
                                       "--venv", "/srv/venv", "list"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: cannot reach " + env.sshd.target() + " over ssh: " + env.sshd.target() +
                     ": Permission denied (publickey).\n");
  auto closed = testsupport::run_sitepatch({"--host", env.sshd.target() + ":2999", "--ssh-command",
                                            env.sshd.ssh_command(), "--venv", "/srv/venv", "list"});
  CHECK(closed.status == 1);
  CHECK(closed.err.find("sitepatch: error: cannot reach " + env.sshd.target() + ":2999 over ssh: ssh: connect to host " +
                        env.sshd.address() + " port 2999: Connection refused") != std::string::npos);
}

TEST_CASE("remote: a venv that does not exist there is named", "[e2e][remote]") {
  RemoteDemo env;
  // SITEPATCH_SSH names the client as --ssh-command does.
  auto r = testsupport::run_sitepatch({"--host", env.sshd.target(), "--venv", "/srv/nope", "list"},
                                      {{"SITEPATCH_SSH", env.sshd.ssh_command()}});
  CHECK(r.status == 2);
  CHECK(r.err == "sitepatch: error: " + env.sshd.target() +
                     ": no Python environment at /srv/nope: /srv/nope does not exist\n");
  auto notenv = testsupport::run_sitepatch({"--host", env.sshd.target(), "--ssh-command", env.sshd.ssh_command(),
                                            "--venv", "/srv", "list"});
  CHECK(notenv.status == 2);
  CHECK(notenv.err == "sitepatch: error: " + env.sshd.target() +
                          ": /srv is not a Python environment: no bin/python3 or bin/python in it\n");

  // A Python too old for the agent (3.6 is not installed here: the real one reports
  // 3.6.9 before it runs what it was given).
  testsupport::spit(env.sshd.local("/srv/old/bin/python3"), testsupport::old_python_script());
  std::filesystem::permissions(env.sshd.local("/srv/old/bin/python3"), std::filesystem::perms::owner_all);
  auto old = testsupport::run_sitepatch({"--host", env.sshd.target(), "--ssh-command", env.sshd.ssh_command(),
                                         "--venv", "/srv/old", "list"});
  CHECK(old.status == 1);
  CHECK(old.err == "sitepatch: error: " + env.sshd.target() + ": Python 3.6.9 (" + testsupport::outer_python() +
                       ") is too old for the sitepatch agent: it needs 3.8 or newer\n");
}

TEST_CASE("remote: paths with quotes, spaces and $(...) reach no shell", "[e2e][remote]") {
  std::string evil = "/srv/we ird'\"$(touch pwned)`touch pwned2`;touch pwned3/venv";
  RemoteDemo env(evil);
  auto r = env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(env.read("flashinfer/jit/cpp_ext.py").find("return Version(torch.version.cuda)") != std::string::npos);
  CHECK(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
  for (const char* f : {"pwned", "pwned2", "pwned3"}) {
    CHECK_FALSE(std::filesystem::exists(env.sshd.local(std::string("/srv/") + f)));
    CHECK_FALSE(std::filesystem::exists(std::string("/root/") + f));
  }
  auto bad = testsupport::run_sitepatch({"--host", "-oProxyCommand=touch /tmp/x", "--venv", "/srv", "list"});
  CHECK(bad.status == 2);
  CHECK(bad.err == "sitepatch: error: --host `-oProxyCommand=touch /tmp/x`: a host name cannot start with '-' "
                   "(expected [user@]host[:port])\n");
}

TEST_CASE("remote: two applies at once are serialized by the remote lock", "[e2e][remote]") {
  RemoteDemo env;
  auto a = env.tmp.path + "/a.yaml";
  auto b = env.tmp.path + "/b.yaml";
  testsupport::spit(a, "id: a\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: get_cuda_version\n"
                       "    replace-body: return Version(torch.version.cuda)\n");
  testsupport::spit(b, "id: b\nedits:\n  - module: flashinfer.jit.cpp_ext\n    function: get_cuda_path\n"
                       "    replace-body: return '/opt/cuda'\n");
  auto fa = std::async(std::launch::async, [&] { return env.sp({"apply", a}); });
  auto fb = std::async(std::launch::async, [&] { return env.sp({"apply", b}); });
  auto ra = fa.get(), rb = fb.get();
  INFO(ra.err << rb.err);
  CHECK(ra.status == 0);
  CHECK(rb.status == 0);
  std::string text = env.read("flashinfer/jit/cpp_ext.py");
  CHECK(text.find("return Version(torch.version.cuda)") != std::string::npos);
  CHECK(text.find("return '/opt/cuda'") != std::string::npos);
  auto list = env.sp({"--json", "list"});
  auto j = nlohmann::json::parse(list.out);
  CHECK(j["patches"].size() == 2);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
}

TEST_CASE("remote: a held lock refuses apply with its message and nothing written, stale git locks are removed",
          "[e2e][remote]") {
  RemoteDemo env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  std::string state = env.sshd.local("/srv/venv/.sitepatch");
  auto log = [&] { return sitepatch::util::run({"git", "--git-dir", state, "log", "--format=%H"}).out; };
  std::string before = log();
  {
    // The lock request is not waited for: the refusal comes with the next answer (the
    // history's snapshot), before anything is written.
    auto theirs = sitepatch::host::make_local_host()->lock(state + "/sitepatch.lock", 100);
    auto r = env.sp({"--lock-timeout", "0.2", "apply", recipe});
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: another sitepatch is working on this environment (lock "
                   "/srv/venv/.sitepatch/sitepatch.lock held); try again later\n");
    CHECK(env.pristine());
    CHECK(log() == before);
  }
  // What a SIGKILL during a ref update leaves: seen in the fetched copy, no listing of its own.
  testsupport::spit(state + "/refs/heads/main.lock", "");
  testsupport::spit(state + "/config.lock", "");
  auto r = env.sp({"-vvv", "apply", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("removed 2 lock file(s) an interrupted sitepatch left in /srv/venv/.sitepatch: config.lock, "
                   "refs/heads/main.lock") != std::string::npos);
  // The history's snapshot is the first request after the lock that is waited for: no
  // listing of its folders before it, only what the plan and the cleaning read ahead.
  CHECK(r.err.find("agent: list_many (read ahead) took") < r.err.find("agent: snapshot took"));
  CHECK(r.err.find("agent: snapshot took") < r.err.find("agent: list_many took"));
  CHECK_FALSE(std::filesystem::exists(state + "/config.lock"));
  CHECK_FALSE(std::filesystem::exists(state + "/refs/heads/main.lock"));
  CHECK(env.read("flashinfer/jit/cpp_ext.py").find("return Version(torch.version.cuda)") != std::string::npos);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
  CHECK(sitepatch::util::run({"git", "--git-dir", state, "fsck", "--no-dangling"}).status == 0);
}

namespace {

// The real ssh host, except that the ssh client is killed after the first file of a
// write has landed: the connection dies in the middle of an apply.
class CutHost : public testsupport::ForwardingHost {
 public:
  CutHost(std::unique_ptr<sitepatch::host::Host> real, std::string pattern)
      : ForwardingHost(std::move(real)), pattern_(std::move(pattern)) {}
  void write(const std::vector<sitepatch::host::WriteRequest>& files) override {
    bool package_files = files.front().path.find("/site-packages/") != std::string::npos;
    if (!package_files || files.size() < 2) return real().write(files);
    real().write({files.front()});
    sitepatch::util::run({"pkill", "-KILL", "-f", pattern_});
    real().write({files.begin() + 1, files.end()});
  }

 private:
  std::string pattern_;
};

}  // namespace

namespace {

// The real ssh host, noting the paths of each read.
class ReadLog : public testsupport::ForwardingHost {
 public:
  using ForwardingHost::ForwardingHost;
  std::vector<std::vector<std::string>> reads;
  std::vector<sitepatch::host::FileData> read(const std::vector<std::string>& paths) override {
    reads.push_back(paths);
    return ForwardingHost::read(paths);
  }
  // A read that asked for pip's RECORD of flashinfer and the note beside the files at once.
  bool read_together() const {
    for (auto& r : reads) {
      auto has = [&](const std::string& tail) {
        return std::any_of(r.begin(), r.end(), [&](const std::string& p) { return sitepatch::util::ends_with(p, tail); });
      };
      if (has("flashinfer_python-0.5.3.dist-info/RECORD") && has("/.sitepatch-patched.json")) return true;
    }
    return false;
  }
};

}  // namespace

TEST_CASE("remote: apply and rollback read pip's RECORD and the note beside the files in one request",
          "[e2e][remote]") {
  using namespace sitepatch;
  RemoteDemo env;
  std::string recipe_path = e2e::bundled("flashinfer-dynamo.yaml");
  auto recipe = recipe::parse(testsupport::slurp(recipe_path), recipe_path);
  std::string record = env.venv.site_packages + "/flashinfer_python-0.5.3.dist-info/RECORD";
  std::string pip_record = testsupport::slurp(record);
  for (bool applying : {true, false}) {
    ReadLog log(host::make_ssh_host(host::SshTarget::parse(env.sshd.target()), env.sshd.ssh_command()));
    auto s = engine::Session::open(log, "/srv/venv", "");
    if (applying) {
      REQUIRE(engine::apply(s, {recipe}, false).written);
      CHECK(testsupport::slurp(record) != pip_record);
      CHECK(std::filesystem::exists(env.venv.site_packages + "/.sitepatch-patched.json"));
    } else {
      REQUIRE(engine::rollback(s, {"flashinfer-dynamo"}, false, false).written);
    }
    INFO((applying ? "apply" : "rollback"));
    CHECK(log.read_together());
  }
  CHECK(env.pristine());
  CHECK(testsupport::slurp(record) == pip_record);
  CHECK_FALSE(std::filesystem::exists(env.venv.site_packages + "/.sitepatch-patched.json"));
}

TEST_CASE("remote: a connection killed mid-apply is finished by the next command", "[e2e][remote]") {
  using namespace sitepatch;
  RemoteDemo env;
  std::string recipe_path = e2e::bundled("flashinfer-dynamo.yaml");
  auto recipe = recipe::parse(testsupport::slurp(recipe_path), recipe_path);
  // The client key's path is unique to this test: it names our ssh process alone.
  std::string ssh = env.sshd.ssh_command();
  std::string key = ssh.substr(ssh.find(" -i ") + 4);
  key = key.substr(0, key.find(' '));
  {
    CutHost cut(host::make_ssh_host(host::SshTarget::parse(env.sshd.target()), ssh), key);
    auto s = engine::Session::open(cut, "/srv/venv", "");
    REQUIRE_THROWS_WITH(engine::apply(s, {recipe}, false),
                        Catch::Contains("the connection to " + env.sshd.target() + " was lost"));
  }
  // One file written, one not; the originals are already in the remote history.
  CHECK(env.read("flashinfer/jit/cpp_ext.py").find("torch.version.cuda") != std::string::npos);
  CHECK(env.read("flashinfer/fp4_quantization.py") == env.installed.at("fp4_quantization.py"));

  auto r = env.sp({"apply", recipe_path});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("finished an interrupted apply of flashinfer-dynamo (1 file(s) written)") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
}

TEST_CASE("remote: after pip install -U there, status, apply and rollback handle the upgrade", "[e2e][remote]") {
  RemoteDemo env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  env.venv.upgrade(e2e::data_wheel("flashinfer-python", "0.6.0", env.tmp.path + "/wheels"));
  auto fresh = e2e::read_tree(env.venv.site_packages + "/flashinfer");

  int before = env.sshd.connections();
  auto st = env.sp({"status"});
  CHECK(st.status == 3);
  CHECK(st.out.find(env.sshd.target() + ":/srv/venv (Python ") == 0);
  CHECK(st.out.find("flashinfer-python 0.5.3 -> 0.6.0 replaced flashinfer/jit/cpp_ext.py\n") != std::string::npos);
  CHECK(st.out.find("  sitepatch --host " + env.sshd.target() + " --ssh-command " +
                    sitepatch::util::shell_quote(env.sshd.ssh_command()) +
                    " --venv /srv/venv reapply flashinfer-dynamo\n") != std::string::npos);
  CHECK(env.sshd.connections() == before + 1);

  auto a = env.sp({"apply", recipe});
  INFO(a.err);
  REQUIRE(a.status == 0);
  CHECK(a.err.find("patching it there") != std::string::npos);
  CHECK(env.read("flashinfer/quantization/fp4_quantization.py").find("@torch.compiler.disable") != std::string::npos);
  CHECK(env.sp({"status"}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(e2e::read_tree(env.venv.site_packages + "/flashinfer") == fresh);
}

TEST_CASE("remote: sync after pip install -U there puts the folder's patch back, one connection each",
          "[e2e][remote][sync]") {
  RemoteDemo env;
  std::string folder = env.tmp.path + "/patches";
  std::filesystem::create_directories(folder);
  std::filesystem::copy_file(e2e::bundled("flashinfer-dynamo.yaml"), folder + "/flashinfer-dynamo.yaml");
  int before = env.sshd.connections();
  REQUIRE(env.sp({"sync", folder}).status == 0);
  CHECK(env.sshd.connections() == before + 1);
  env.venv.upgrade(e2e::data_wheel("flashinfer-python", "0.6.0", env.tmp.path + "/wheels"));
  before = env.sshd.connections();
  auto check = env.sp({"sync", "--check", folder});
  CHECK(check.status == 3);
  CHECK(check.out.find("reapply    flashinfer-dynamo  flashinfer-python 0.5.3 -> 0.6.0 took its edits away") == 0);
  auto r = env.sp({"sync", folder});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(env.sshd.connections() == before + 2);
  CHECK(env.read("flashinfer/quantization/fp4_quantization.py").find("@torch.compiler.disable") != std::string::npos);
  CHECK(env.sp({"sync", "--check", folder}).status == 0);

  // The patched wheel installed there over the applied patch: the next sync drops the
  // record, and list there reads the shipped recipe from the dist-info.
  std::filesystem::create_directories(env.tmp.path + "/patched");
  auto wheel = testsupport::run_sitepatch({"wheel", folder, "--from",
                                           e2e::data_wheel("flashinfer-python", "0.6.0", env.tmp.path + "/wheels"),
                                           "-o", env.tmp.path + "/patched"});
  REQUIRE(wheel.status == 0);
  env.venv.pip({"install", "-q", "--no-index", "--no-deps", sitepatch::util::trim(wheel.out)});
  auto shipped = env.sp({"sync", "--check", folder});
  CHECK(shipped.status == 3);
  CHECK(shipped.out.find("reapply    flashinfer-dynamo  shipped patched in flashinfer-python 0.6.0+sitepatch.") == 0);
  REQUIRE(env.sp({"sync", folder}).status == 0);
  auto list = nlohmann::json::parse(env.sp({"--json", "list"}).out)["patches"];
  REQUIRE(list.size() == 1);
  CHECK(list[0]["shipped"].get<std::string>().find("/srv/venv/lib/") == 0);
  CHECK(env.sp({"sync", "--check", folder}).status == 0);
}

TEST_CASE("remote: reapply --all after pip install --force-reinstall there, the recipe file deleted here",
          "[e2e][remote][reapply]") {
  RemoteDemo env;
  std::string recipe = env.tmp.path + "/flashinfer-dynamo.yaml";
  std::filesystem::copy_file(e2e::bundled("flashinfer-dynamo.yaml"), recipe);
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  auto patched = e2e::read_tree(env.venv.site_packages + "/flashinfer");
  std::filesystem::remove(recipe);
  env.venv.install(std::vector<std::string>{
      "--force-reinstall", "--no-deps", e2e::data_wheel("flashinfer-python", "0.5.3", env.tmp.path + "/wheels")});
  REQUIRE(env.pristine());

  int before = env.sshd.connections();
  auto r = env.sp({"reapply", "--all"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(env.sshd.connections() == before + 1);
  CHECK(r.err.find("applied flashinfer-dynamo: 2 file(s) changed") != std::string::npos);
  CHECK(e2e::read_tree(env.venv.site_packages + "/flashinfer") == patched);
  CHECK(env.sp({"verify"}).status == 0);
  CHECK(env.sp({"reapply", "--all"}).err == "nothing to reapply: every patch is applied\n");
}

TEST_CASE("remote: edit, a hand edit there, capture: the recipe here, the record there, one connection each",
          "[e2e][remote][capture]") {
  RemoteDemo env;
  int before = env.sshd.connections();
  auto saved = env.sp({"edit", "flashinfer-python"});
  INFO(saved.err);
  REQUIRE(saved.status == 0);
  CHECK(saved.out == "  /srv/venv" + env.venv.site_packages.substr(env.venv.root.size()) + "/flashinfer\n");
  std::string rel = "flashinfer/jit/cpp_ext.py";
  std::string text = env.read(rel);
  size_t at = text.find("def get_cuda_version");
  REQUIRE(at != std::string::npos);
  std::string edited = text.substr(0, at) + "@torch.compiler.disable\n" + text.substr(at);
  testsupport::spit(env.venv.site_packages + "/" + rel, edited);

  std::string recipe = env.tmp.path + "/captured.yaml";
  auto r = env.sp({"capture", "flashinfer-python", "-o", recipe});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(env.sshd.connections() == before + 2);
  CHECK(r.err.find("flashinfer/jit/cpp_ext.py: 1 edit(s), pip's bytes from the history (sitepatch edit)") !=
        std::string::npos);
  CHECK(testsupport::slurp(recipe).find("    function: get_cuda_version\n    add-decorator: torch.compiler.disable\n") !=
        std::string::npos);
  CHECK(env.read(rel) == edited);
  CHECK(env.sp({"verify"}).status == 0);
  REQUIRE(env.sp({"rollback", "flashinfer-python-local"}).status == 0);
  CHECK(env.pristine());
}

TEST_CASE("remote: a base interpreter's patch is kept with the base there, and another venv rolls it back",
          "[e2e][remote]") {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  auto base = testsupport::base_interpreter(sshd.local("/srv/base"));
  base.install(testsupport::build_wheel(
      {"basepkg", "1.0", {{"basepkg/__init__.py", "def version():\n    return 'nvcc'\n"}}}, tmp.path));
  // Venvs made over there would name /srv/base as their home: so do these.
  for (auto name : {"one", "two"}) {
    auto v = testsupport::venv_from(base.python, sshd.local(std::string("/srv/") + name), true);
    std::string cfg = testsupport::slurp(v.root + "/pyvenv.cfg");
    cfg.replace(cfg.find(base.root), base.root.size(), "/srv/base");
    testsupport::spit(v.root + "/pyvenv.cfg", cfg);
  }
  std::string recipe = tmp.path + "/r.yaml";
  testsupport::spit(recipe,
                    "id: base-version\n"
                    "edits:\n"
                    "  - module: basepkg\n"
                    "    function: version\n"
                    "    replace-body: return '13.0'\n");
  auto sp = [&](const std::string& venv, std::vector<std::string> args) {
    args.insert(args.begin(), {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", venv});
    return testsupport::run_sitepatch(args);
  };
  std::string owner = "the base interpreter at /srv/base";
  auto refused = sp("/srv/one", {"apply", recipe});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("/srv/base/lib/") != std::string::npos);
  CHECK(refused.err.find("(basepkg/__init__.py) belongs to " + owner) != std::string::npos);

  int before = sshd.connections();
  auto applied = sp("/srv/one", {"apply", "--system", recipe});
  INFO(applied.err);
  REQUIRE(applied.status == 0);
  CHECK(sshd.connections() == before + 1);
  CHECK(applied.err.find("the history goes with that folder, to /srv/base/.sitepatch") != std::string::npos);
  CHECK(testsupport::slurp(base.site_packages + "/basepkg/__init__.py").find("return '13.0'") != std::string::npos);
  CHECK(sitepatch::util::run({"git", "--git-dir", sshd.local("/srv/base/.sitepatch"), "log", "--format=%s"}).out ==
        "apply base-version\napply base-version: originals saved, writing\n");

  auto listed = sp("/srv/two", {"list"});
  CHECK(listed.out.find("base-version  basepkg==1.0") != std::string::npos);
  CHECK(listed.out.find("  history /srv/base/.sitepatch, with " + owner + "\n") != std::string::npos);
  auto back = sp("/srv/two", {"rollback", "base-version"});
  INFO(back.err);
  REQUIRE(back.status == 0);
  CHECK(testsupport::slurp(base.site_packages + "/basepkg/__init__.py") == "def version():\n    return 'nvcc'\n");
  CHECK(sp("/srv/one", {"list"}).out == "no patches applied in /srv/one\n");
}

TEST_CASE("remote: a command fetches only the history files that changed since the last one", "[e2e][remote]") {
  RemoteDemo env;
  std::string cache_home = env.tmp.path + "/cache";
  std::map<std::string, std::string> vars = {{"XDG_CACHE_HOME", cache_home}};
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}, vars).status == 0);
  auto fetched = [&](const sitepatch::util::RunResult& r) {
    auto at = r.err.find(" fetched, ");
    REQUIRE(at != std::string::npos);
    return std::stoi(r.err.substr(r.err.rfind(", ", at - 1) + 2));
  };
  const std::string listed = "flashinfer-dynamo  flashinfer-python==0.5.3";
  auto first = env.sp({"-vv", "list"}, vars);
  INFO(first.err);
  CHECK(first.out.find(listed) != std::string::npos);
  CHECK(fetched(first) == 0);  // apply left its copy: nothing crosses again

  // The copy is only a saving: a file changed in it is fetched again, not believed.
  std::string copy;
  for (auto& e : std::filesystem::recursive_directory_iterator(cache_home))
    if (e.path().filename() == "HEAD" && e.path().parent_path().filename() != "logs") copy = e.path().parent_path();
  REQUIRE(!copy.empty());
  testsupport::spit(copy + "/HEAD", "ref: refs/heads/nowhere\n");
  auto again = env.sp({"-v", "list"}, vars);
  CHECK(again.out.find(listed) != std::string::npos);
  CHECK(fetched(again) == 1);
  CHECK(testsupport::slurp(copy + "/HEAD") == testsupport::slurp(env.sshd.local("/srv/venv/.sitepatch/HEAD")));

  // Without a copy (another machine, a cleaned cache) everything comes.
  std::filesystem::remove_all(cache_home);
  auto cold = env.sp({"-v", "verify"}, vars);
  CHECK(cold.status == 0);
  CHECK(fetched(cold) > 3);
  REQUIRE(env.sp({"rollback", "--all"}, vars).status == 0);
  CHECK(env.pristine());
  CHECK(env.sp({"list"}, vars).out == "no patches applied in /srv/venv\n");
}

namespace {

// A remote whose history listing names a file outside the history.
class HostileSnapshot : public testsupport::ForwardingHost {
 public:
  using ForwardingHost::ForwardingHost;
  std::optional<std::map<std::string, std::string>> snapshot(
      const std::string& d, const std::vector<std::string>& skip,
      const std::map<std::string, std::string>& have) override {
    auto files = real().snapshot(d, skip, have);
    if (files) (*files)["../../escaped"] = "planted\n";
    return files;
  }
};

}  // namespace

TEST_CASE("remote: a history file named outside the history is refused before this machine keeps a copy",
          "[e2e][remote]") {
  using namespace sitepatch;
  RemoteDemo env;
  std::string cache_home = env.tmp.path + "/cache/deep/er";
  std::map<std::string, std::string> vars = {{"XDG_CACHE_HOME", cache_home}};
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}, vars).status == 0);
  ::setenv("XDG_CACHE_HOME", cache_home.c_str(), 1);
  HostileSnapshot hostile(host::make_ssh_host(host::SshTarget::parse(env.sshd.target()), env.sshd.ssh_command()));
  auto s = engine::Session::open(hostile, "/srv/venv", "");
  CHECK_THROWS_WITH(engine::verify(s, {}), Catch::Contains(": unexpected file in /srv/venv/.sitepatch: ../../escaped"));
  ::unsetenv("XDG_CACHE_HOME");
  std::error_code ec;
  for (auto& e : std::filesystem::recursive_directory_iterator(env.tmp.path, ec))
    CHECK(e.path().filename() != "escaped");
}

TEST_CASE("remote: --ssh-command runs through sh -c as git runs GIT_SSH_COMMAND: $VARS expand, quotes hold",
          "[e2e][remote]") {
  RemoteDemo env;
  // The key in a folder with a space, named through a variable of this machine.
  std::string keys = env.tmp.path + "/my keys";
  std::filesystem::create_directories(keys);
  std::filesystem::copy_file(env.sshd.client_key(), keys + "/k");
  std::filesystem::permissions(keys + "/k", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::string cmd = "ssh -i \"$SP_TEST_KEYS/k\" -o 'ServerAliveInterval 30' " + env.sshd.ssh_options();
  auto base = [&](const std::vector<std::string>& rest) {
    std::vector<std::string> args{"--host", env.sshd.target(), "--venv", "/srv/venv"};
    args.insert(args.end(), rest.begin(), rest.end());
    return args;
  };
  auto r = testsupport::run_sitepatch(base({"--ssh-command", cmd, "apply", e2e::bundled("flashinfer-dynamo.yaml")}),
                                      {{"SP_TEST_KEYS", keys}});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(env.read("flashinfer/jit/cpp_ext.py").find("return Version(torch.version.cuda)") != std::string::npos);
  // SITEPATCH_SSH is read the same way.
  auto v = testsupport::run_sitepatch(base({"verify"}), {{"SP_TEST_KEYS", keys}, {"SITEPATCH_SSH", cmd}});
  CHECK(v.status == 0);
  // Unset, the variable expands to nothing and ssh names the key it cannot read.
  auto unset = testsupport::run_sitepatch(base({"--ssh-command", cmd, "list"}), {{"SP_TEST_KEYS", ""}});
  CHECK(unset.status == 1);
  CHECK(unset.err.find("sitepatch: error: cannot reach " + env.sshd.target() + " over ssh: ") == 0);

  // A remote adopt: someone's hotfix there becomes the applied state.
  std::string rel = "flashinfer/jit/cpp_ext.py";
  testsupport::spit(env.venv.site_packages + "/" + rel, env.read(rel) + "# hotfix\n");
  CHECK(env.sp({"status"}).status == 3);
  auto ad = env.sp({"adopt", "flashinfer-dynamo"});
  INFO(ad.err);
  CHECK(ad.status == 0);
  CHECK(env.sp({"status"}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
}

TEST_CASE("remote: an --ssh-command whose program does not exist says so", "[e2e][remote]") {
  // No machine is needed: the local shell fails before any connection.
  for (auto how : {std::map<std::string, std::string>{}, std::map<std::string, std::string>{{"SITEPATCH_SSH", "no-such-ssh -x"}}}) {
    std::vector<std::string> args{"--host", "root@192.0.2.1", "--venv", "/srv/venv"};
    if (how.empty()) args.insert(args.end(), {"--ssh-command", "no-such-ssh -x"});
    args.push_back("list");
    auto r = testsupport::run_sitepatch(args, how);
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: cannot run the ssh command `no-such-ssh -x` (from --ssh-command or "
                   "SITEPATCH_SSH): sitepatch-ssh: 1: no-such-ssh: not found\n");
  }
  auto blank = testsupport::run_sitepatch({"--host", "root@192.0.2.1", "--venv", "/srv", "--ssh-command", "  ", "list"});
  CHECK(blank.status == 2);
  CHECK(blank.err == "sitepatch: error: --ssh-command is empty\n");
}

TEST_CASE("remote: an --ssh-command of plain words runs without a shell, one with expansions through sh",
          "[e2e][remote]") {
  RemoteDemo env;
  // A stand-in ssh that notes which process started it, then is the real one.
  std::string wrap = env.tmp.path + "/ssh-wrap", seen = env.tmp.path + "/parent";
  testsupport::spit(wrap, "#!/bin/sh\ncat /proc/$PPID/comm > " + seen + "\nexec ssh \"$@\"\n");
  std::filesystem::permissions(wrap, std::filesystem::perms::owner_all);
  auto list_with = [&](const std::string& cmd) {
    auto r = testsupport::run_sitepatch({"--host", env.sshd.target(), "--venv", "/srv/venv", "--ssh-command", cmd, "list"},
                                        {{"SP_WRAP", wrap}});
    INFO(cmd << "\n" << r.err);
    CHECK(r.status == 0);
    return testsupport::slurp(seen);
  };
  std::string rest = " -i " + env.sshd.client_key() + " " + env.sshd.ssh_options();
  CHECK(list_with(wrap + " -o 'ServerAliveInterval 30'" + rest) == "sitepatch\n");
  CHECK(list_with("$SP_WRAP" + rest) == "sh\n");
}

TEST_CASE("remote: a history made on the host itself is used over ssh", "[e2e][remote]") {
  RemoteDemo env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  // Applied there without ssh: loose objects, no pack, no objects/pack/ folder.
  auto local = testsupport::run_sitepatch({"--venv", env.venv.root, "apply", recipe});
  INFO(local.err);
  REQUIRE(local.status == 0);
  std::string packs = env.sshd.local("/srv/venv/.sitepatch/objects/pack");
  REQUIRE((!std::filesystem::exists(packs) || std::filesystem::is_empty(packs)));
  auto rb = env.sp({"rollback", "flashinfer-dynamo"});
  INFO(rb.err);
  CHECK(rb.status == 0);
  CHECK(env.pristine());
  CHECK(env.sp({"list"}).out == "no patches applied in /srv/venv\n");
  CHECK(env.sp({"apply", recipe}).status == 0);
  CHECK(env.sp({"verify"}).status == 0);
}

TEST_CASE("remote: a host that accepts the connection and never speaks fails within the connect timeout",
          "[e2e][remote]") {
  // A listener that takes connections and sends nothing, as a wedged sshd does.
  sitepatch::util::Process silent({"python3", "-c",
                                   "import socket, sys, time\n"
                                   "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)\n"
                                   "print(s.getsockname()[1], flush=True)\n"
                                   "held = []\n"
                                   "while True: held.append(s.accept())\n"});
  std::string port;
  REQUIRE(silent.read_line(port));
  port = sitepatch::util::trim(port);
  // sitepatch's own bound is ConnectTimeout=20, which ssh takes unless the --ssh-command
  // gave one before it. A stand-in ssh notes the options sitepatch passes, then runs the
  // real one with a 2 s bound first: the same timeout and message in a tenth of the wait.
  testsupport::TempDir tmp;
  std::string wrap = tmp.path + "/ssh-wrap", seen = tmp.path + "/args";
  testsupport::spit(wrap, "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + seen + "\nexec ssh -o ConnectTimeout=2 \"$@\"\n");
  std::filesystem::permissions(wrap, std::filesystem::perms::owner_all);
  auto started = std::chrono::steady_clock::now();
  auto r = testsupport::run_sitepatch({"--host", "root@127.0.0.1:" + port, "--ssh-command",
                                       wrap + " -F /dev/null -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no",
                                       "--venv", "/srv/venv", "list"});
  auto took = std::chrono::steady_clock::now() - started;
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(sitepatch::util::starts_with(r.err, "sitepatch: error: cannot reach root@127.0.0.1:" + port + " over ssh: "));
  CHECK(r.err.find("timed out") != std::string::npos);
  CHECK(took < std::chrono::seconds(45));
  auto args = sitepatch::util::split(testsupport::slurp(seen), '\n');
  auto bound = std::find(args.begin(), args.end(), "ConnectTimeout=20");
  REQUIRE(bound != args.end());
  CHECK(*(bound - 1) == "-o");
  // No earlier ConnectTimeout of sitepatch's own: 20 s is the bound a plain ssh gets.
  CHECK(std::count_if(args.begin(), args.end(),
                      [](const std::string& a) { return a.rfind("ConnectTimeout=", 0) == 0; }) == 1);
}
