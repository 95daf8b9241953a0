// A command killed at every step that changes the disk (each write to a file, fsync,
// rename, link and unlink, the history's ref updates among them), in turn: the next
// command always gets pip's bytes back, the history stays readable by git, and no temp
// is left beside the package's files. The local apply and rollback kill at every step;
// the other loops at a seeded sample of steps (support/kill_sample.hpp says how).
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>

#include "e2e_support.hpp"
#include "support/kill_sample.hpp"
#include "support/sshd.hpp"

namespace fs = std::filesystem;

namespace {

struct Killer {
  std::string count_file;
  /// Runs sitepatch with `args`, killed before the `at`th disk-changing call (0: never).
  sitepatch::util::RunResult run(const e2e::DemoEnv& env, std::vector<std::string> args, long at) const {
    args.insert(args.begin(), {"--venv", env.venv.root, "-q"});
    return testsupport::run_sitepatch(args, {{"LD_PRELOAD", SITEPATCH_KILL_SHIM},
                                             {"SITEPATCH_KILL_AT", std::to_string(at)},
                                             {"SITEPATCH_KILL_COUNT", count_file}});
  }
  long count() const { return std::stol(testsupport::slurp(count_file)); }
};

/// Temps, and after a rollback of everything the note about patched files, under `site`.
std::vector<std::string> leftovers_in(const std::string& site) {
  std::vector<std::string> out;
  for (auto& e : fs::recursive_directory_iterator(site)) {
    std::string name = e.path().filename().string();
    bool temp = name.find(".sitepatch-") != std::string::npos &&
                (sitepatch::util::ends_with(name, ".tmp") || sitepatch::util::ends_with(name, ".orig"));
    // After a rollback of everything, the note about patched files is gone too.
    if (temp || name == ".sitepatch-patched.json") out.push_back(e.path().string());
  }
  return out;
}

std::vector<std::string> leftovers(const e2e::DemoEnv& env) { return leftovers_in(env.venv.site_packages); }

/// Kills apply of the bundled recipe at each step in turn until it is left pending with
/// the files `written` (some written) or not (none yet); false when no step does.
bool kill_until_pending(const e2e::DemoEnv& env, const Killer& k, bool written) {
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  std::string state = env.venv.root + "/.sitepatch";
  // Counted on a fresh history, as every run below starts from one (a history that holds
  // the blobs already takes fewer writes).
  fs::remove_all(state);
  REQUIRE(k.run(env, {"apply", recipe}, 0).status == 0);
  long steps = k.count();
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  auto pending = [&] {
    auto r = sitepatch::util::run({"git", "--git-dir", state, "show", "main:patches/flashinfer-dynamo/patch.json"});
    return r.status == 0 && r.out.find("\"state\": \"pending\"") != std::string::npos;
  };
  for (long at = 1; at <= steps; ++at) {
    fs::remove_all(state);
    REQUIRE(k.run(env, {"apply", recipe}, at).status != 0);
    if (env.pristine() != written && pending()) return true;
    REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  }
  return false;
}

/// A remote demo environment: the stand-ins installed by pip at /srv/venv behind a test sshd.
struct RemoteDemo {
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  testsupport::Venv venv = testsupport::Venv::create(sshd.local("/srv/venv"));
  std::map<std::string, std::string> installed;
  std::string count_file = tmp.path + "/count";
  RemoteDemo() {
    std::string wheels = tmp.path + "/wheels";
    venv.install({e2e::data_wheel("torch", "2.9.0", wheels), e2e::data_wheel("packaging", "24.0", wheels),
                  e2e::data_wheel("flashinfer-python", "0.5.3", wheels)});
    installed = e2e::read_tree(venv.site_packages + "/flashinfer");
  }
  /// sitepatch on /srv/venv with `ssh` as the client.
  sitepatch::util::RunResult run(std::vector<std::string> args, const std::string& ssh,
                                 const std::map<std::string, std::string>& env = {}) const {
    args.insert(args.begin(), {"-q", "--host", sshd.target(), "--ssh-command", ssh, "--venv", "/srv/venv"});
    return testsupport::run_sitepatch(args, env);
  }
  bool pristine() const { return e2e::read_tree(venv.site_packages + "/flashinfer") == installed; }
  long count() const { return std::stol(testsupport::slurp(count_file)); }
};

bool git_fsck_clean(const std::string& dir) {
  if (!fs::exists(dir + "/HEAD") || !fs::exists(dir + "/config")) return true;  // not made yet
  auto r = sitepatch::util::run({"git", "--git-dir", dir, "fsck", "--no-dangling"});
  return r.status == 0 && r.err.find("error") == std::string::npos;
}

}  // namespace

TEST_CASE("apply killed at every step: the next command restores pip's bytes", "[e2e][crash]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  std::string state = env.venv.root + "/.sitepatch";
  Killer k{env.tmp.path + "/count"};
  // Counted once on a first apply into a new history, the path every later run takes.
  REQUIRE(k.run(env, {"apply", recipe}, 0).status == 0);
  long steps = k.count();
  REQUIRE(steps > 10);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  for (long at = 1; at <= steps; ++at) {
    fs::remove_all(state);
    auto r = k.run(env, {"apply", recipe}, at);
    INFO("killed before step " << at << " of " << steps << "; " << r.err);
    REQUIRE((r.status == 137 || r.status == -9 || r.status == 0));
    // Alternate the command that comes next: a rollback, or the apply again.
    if (at % 2) {
      auto back = env.sp({"rollback", "--all"});
      INFO(back.err);
      REQUIRE(back.status == 0);
    } else {
      auto again = env.sp({"apply", recipe});
      INFO(again.err);
      REQUIRE(again.status == 0);
      REQUIRE(env.sp({"verify"}).status == 0);
      REQUIRE(env.sp({"rollback", "--all"}).status == 0);
    }
    CHECK(env.pristine());
    CHECK(leftovers(env).empty());
    CHECK(git_fsck_clean(state));
  }
}

TEST_CASE("two recipes sharing a file, killed at every step: the next apply finishes both", "[e2e][crash]") {
  e2e::DemoEnv env;
  // Applied in this order; their ids sort the other way round, as the history lists them.
  std::string first = env.recipe("zz-first.yaml",
                                 "id: zz-first\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                 "    function: get_cuda_version\n    replace-body: return Version(torch.version.cuda)\n");
  std::string second = env.recipe("aa-second.yaml",
                                  "id: aa-second\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                  "    function: get_cuda_path\n    replace-body: return '/opt/cuda'\n");
  std::string state = env.venv.root + "/.sitepatch";
  Killer k{env.tmp.path + "/count"};
  REQUIRE(k.run(env, {"apply", first, second}, 0).status == 0);
  long steps = k.count();
  std::string both = env.read("flashinfer/jit/cpp_ext.py");
  REQUIRE(both.find("return '/opt/cuda'") != std::string::npos);
  REQUIRE(both.find("return Version(torch.version.cuda)") != std::string::npos);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  for (long at : testsupport::kill_steps(steps, "two recipes sharing a file")) {
    fs::remove_all(state);
    auto r = k.run(env, {"apply", first, second}, at);
    INFO("killed before step " << at << " of " << steps << "; " << r.err);
    REQUIRE((r.status == 137 || r.status == -9 || r.status == 0));
    auto again = env.sp({"apply", first, second});
    INFO(again.err);
    REQUIRE(again.status == 0);
    CHECK(env.read("flashinfer/jit/cpp_ext.py") == both);
    REQUIRE(env.sp({"verify"}).status == 0);
    REQUIRE(env.sp({"rollback", "--all"}).status == 0);
    CHECK(env.pristine());
    CHECK(leftovers(env).empty());
  }
}

TEST_CASE("an apply that fails after finishing an interrupted one says so and exits 4", "[e2e][crash]") {
  e2e::DemoEnv env;
  Killer k{env.tmp.path + "/count"};
  // Killed after the originals were saved and before any file was written: pending.
  REQUIRE(kill_until_pending(env, k, false));
  std::string missing = env.recipe("missing.yaml", "id: missing\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                                   "    function: no_such_function\n    replace-body: return 1\n");
  auto r = env.sp({"apply", missing});
  CHECK(r.status == 4);
  CHECK(r.err.find("finished an interrupted apply of flashinfer-dynamo (2 file(s) written)") != std::string::npos);
  CHECK(r.err.find("sitepatch: apply failed; nothing of it was written, but finishing the interrupted apply above "
                   "wrote 2 file(s), which stay as that apply planned them") != std::string::npos);
  CHECK(r.err.find("nothing was written") == std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);
}

TEST_CASE("an apply killed while writing: read commands say so and exit 3, and the command they give finishes it",
          "[e2e][crash]") {
  e2e::DemoEnv env;
  Killer k{env.tmp.path + "/count"};
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string patched = env.read("flashinfer/jit/cpp_ext.py");
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  // The first step at which a file is written and the apply is still pending.
  REQUIRE(kill_until_pending(env, k, true));
  std::string fix = "sitepatch --venv " + env.venv.root + " reapply flashinfer-dynamo";
  auto status = env.sp({"status"});
  CHECK(status.status == 3);
  CHECK(status.out.find("1 patch(es), 1 need(s) attention") != std::string::npos);
  CHECK(status.out.find("flashinfer-dynamo  interrupted while writing") != std::string::npos);
  CHECK(status.out.find("the apply of flashinfer-dynamo was interrupted while it wrote the files (their originals are "
                        "in the history): " + fix + " finishes it") != std::string::npos);
  CHECK(status.out.find("  " + fix + "    # finishes the interrupted apply") != std::string::npos);
  auto list = env.sp({"list"});
  CHECK(list.status == 3);
  CHECK(list.out.find("unfinished (writing)") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 3);
  auto json = env.sp({"--json", "verify"});
  CHECK(json.out.find("\"unfinished\": \"writing\"") != std::string::npos);
  // What status gives finishes it, briefly under -q, and nothing is left beside the files.
  auto finished = env.sp({"-q", "reapply", "flashinfer-dynamo"});
  INFO(finished.err);
  CHECK(finished.status == 0);
  CHECK(finished.err.size() < 400);
  CHECK(finished.err.find("finished an interrupted apply of flashinfer-dynamo") != std::string::npos);
  CHECK(env.read("flashinfer/jit/cpp_ext.py") == patched);
  CHECK(leftovers(env).size() == 1);  // the note about patched files, and no temp
  CHECK(env.sp({"status"}).status == 0);
  CHECK(env.sp({"list"}).status == 0);
}

TEST_CASE("SIGINT at every step of apply and rollback: exit 130, and the environment is whole, before or after",
          "[e2e][crash]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  std::string state = env.venv.root + "/.sitepatch";
  Killer k{env.tmp.path + "/count"};
  REQUIRE(k.run(env, {"apply", recipe}, 0).status == 0);
  long apply_steps = k.count();
  REQUIRE(k.run(env, {"rollback", "--all"}, 0).status == 0);
  long rollback_steps = k.count();
  auto interrupt = [&](std::vector<std::string> args, long at) {
    args.insert(args.begin(), {"--venv", env.venv.root, "-q"});
    return testsupport::run_sitepatch(args, {{"LD_PRELOAD", SITEPATCH_KILL_SHIM},
                                             {"SITEPATCH_KILL_AT", std::to_string(at)},
                                             {"SITEPATCH_KILL_SIGNAL", std::to_string(SIGINT)},
                                             {"SITEPATCH_KILL_COUNT", k.count_file}});
  };
  // Either as it was or wholly applied: never an apply a later command must finish.
  auto whole = [&](bool applied) {
    auto status = env.sp({"status"});
    INFO(status.out);
    CHECK(status.status == 0);
    CHECK(leftovers(env).size() == (applied ? 1u : 0u));  // the note beside patched files only
  };
  for (long at : testsupport::kill_steps(apply_steps, "SIGINT, apply")) {
    fs::remove_all(state);
    auto r = interrupt({"apply", recipe}, at);
    INFO("SIGINT before step " << at << " of " << apply_steps << "; " << r.err);
    // A step a run before made may not come (no .pyc left to remove): then no signal either.
    CHECK(r.status == (k.count() >= at ? 130 : 0));
    bool applied = !env.pristine();
    // Written means finished, and said so (a signal after the apply's commit ends it quietly).
    if (applied && r.err.find("the apply had begun writing, so it finished first") == std::string::npos)
      CHECK(env.sp({"log"}).out.find("apply flashinfer-dynamo\n") != std::string::npos);
    whole(applied);
    if (applied) REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  }
  for (long at : testsupport::kill_steps(rollback_steps, "SIGINT, rollback")) {
    fs::remove_all(state);
    REQUIRE(env.sp({"apply", recipe}).status == 0);
    auto r = interrupt({"rollback", "--all"}, at);
    INFO("SIGINT before step " << at << " of " << rollback_steps << "; " << r.err);
    CHECK(r.status == (k.count() >= at ? 130 : 0));
    bool back = env.pristine();
    whole(!back);
    if (!back) REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  }
}

TEST_CASE("rollback killed at every step: the next rollback restores pip's bytes", "[e2e][crash]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  std::string state = env.venv.root + "/.sitepatch";
  Killer k{env.tmp.path + "/count"};
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  REQUIRE(k.run(env, {"rollback", "--all"}, 0).status == 0);
  long steps = k.count();
  REQUIRE(steps > 5);
  for (long at = 1; at <= steps; ++at) {
    fs::remove_all(state);
    REQUIRE(env.sp({"apply", recipe}).status == 0);
    auto r = k.run(env, {"rollback", "--all"}, at);
    INFO("killed before step " << at << " of " << steps << "; " << r.err);
    REQUIRE((r.status == 137 || r.status == -9 || r.status == 0));
    auto back = env.sp({"rollback", "--all"});
    INFO(back.err);
    REQUIRE(back.status == 0);
    CHECK(env.pristine());
    CHECK(leftovers(env).empty());
    CHECK(git_fsck_clean(state));
    CHECK(env.sp({"list"}).out == "no patches applied in " + env.venv.root + "\n");
  }
}

TEST_CASE("remote: apply killed at every step on this side: the next command restores pip's bytes",
          "[e2e][crash][remote]") {
  RemoteDemo env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  auto sp = [&](std::vector<std::string> args, long at) {
    return env.run(args, env.sshd.ssh_command(),
                   {{"LD_PRELOAD", at >= 0 ? SITEPATCH_KILL_SHIM : ""},
                    {"SITEPATCH_KILL_AT", std::to_string(std::max(at, 0L))},
                    {"SITEPATCH_KILL_COUNT", env.count_file}});
  };
  // The steps of this side: the history's local copy, written and sent back.
  REQUIRE(sp({"apply", recipe}, 0).status == 0);
  long steps = env.count();
  REQUIRE(steps > 10);
  REQUIRE(sp({"rollback", "--all"}, -1).status == 0);
  for (long at : testsupport::kill_steps(steps, "remote apply, this side")) {
    fs::remove_all(env.sshd.local("/srv/venv/.sitepatch"));
    auto r = sp({"apply", recipe}, at);
    INFO("killed before step " << at << " of " << steps << "; " << r.err);
    REQUIRE((r.status == 137 || r.status == -9 || r.status == 0));
    auto back = sp({"rollback", "--all"}, -1);
    INFO(back.err);
    REQUIRE(back.status == 0);
    CHECK(env.pristine());
    CHECK(git_fsck_clean(env.sshd.local("/srv/venv/.sitepatch")));
  }
}

TEST_CASE("remote: the agent killed at every step of apply and rollback: the next command restores pip's bytes",
          "[e2e][crash][remote]") {
  RemoteDemo env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  // The shim reaches the agent through the client's SetEnv (the test sshd accepts it),
  // and acts only in the Python process, not in the shell that starts it.
  auto sp = [&](std::vector<std::string> args, long at) {
    std::string ssh = env.sshd.ssh_command();
    if (at >= 0)
      ssh += " -o 'SetEnv=LD_PRELOAD=" + std::string(SITEPATCH_KILL_SHIM) + " SITEPATCH_KILL_PROGRAM=python" +
             " SITEPATCH_KILL_AT=" + std::to_string(at) + " SITEPATCH_KILL_COUNT=" + env.count_file + "'";
    return env.run(args, ssh);
  };
  auto steps_of = [&](std::vector<std::string> args) {
    REQUIRE(sp(args, 0).status == 0);
    return env.count();
  };
  auto check = [&] {
    CHECK(env.pristine());
    CHECK(git_fsck_clean(env.sshd.local("/srv/venv/.sitepatch")));
    CHECK(leftovers_in(env.venv.site_packages).empty());
  };

  long apply_steps = steps_of({"apply", recipe});
  REQUIRE(apply_steps > 5);
  long rollback_steps = steps_of({"rollback", "--all"});
  REQUIRE(rollback_steps > 3);
  for (long at : testsupport::kill_steps(apply_steps, "remote agent, apply")) {
    fs::remove_all(env.sshd.local("/srv/venv/.sitepatch"));
    auto r = sp({"apply", recipe}, at);
    INFO("agent killed before step " << at << " of " << apply_steps << " of apply; " << r.err);
    auto back = sp({"rollback", "--all"}, -1);
    INFO(back.err);
    REQUIRE(back.status == 0);
    check();
  }
  for (long at : testsupport::kill_steps(rollback_steps, "remote agent, rollback")) {
    fs::remove_all(env.sshd.local("/srv/venv/.sitepatch"));
    REQUIRE(sp({"apply", recipe}, -1).status == 0);
    auto r = sp({"rollback", "--all"}, at);
    INFO("agent killed before step " << at << " of " << rollback_steps << " of rollback; " << r.err);
    auto back = sp({"rollback", "--all"}, -1);
    INFO(back.err);
    REQUIRE(back.status == 0);
    check();
  }
}

namespace {

/// Two recipes that share a file, and what the files are with each and with both.
struct SharedPair {
  e2e::DemoEnv env;
  std::string state = env.venv.root + "/.sitepatch";
  std::string a = env.recipe("a.yaml", "id: a\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                       "    function: get_cuda_version\n    replace-body: return Version(torch.version.cuda)\n");
  std::string b = env.recipe("b.yaml", "id: b\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                       "    function: get_cuda_path\n    replace-body: return '/opt/cuda'\n");
  std::string rel = "flashinfer/jit/cpp_ext.py";
  std::string dist_info = env.venv.site_packages + "/flashinfer_python-0.5.3.dist-info";
  std::map<std::string, std::string> saved_site;  // site-packages files -> bytes, of a saved moment
  std::string saved_state = env.tmp.path + "/saved-state";

  /// The history and the package's files as they are now, to come back to.
  void save() {
    saved_site = e2e::read_tree(env.venv.site_packages + "/flashinfer");
    for (auto& [rel_path, bytes] : e2e::read_tree(dist_info)) saved_site["../" + rel_path] = bytes;
    fs::remove_all(saved_state);
    fs::copy(state, saved_state, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  void restore() const {
    for (auto& [rel_path, bytes] : saved_site) {
      std::string path = rel_path.rfind("../", 0) == 0 ? dist_info + "/" + rel_path.substr(3)
                                                       : env.venv.site_packages + "/flashinfer/" + rel_path;
      testsupport::spit(path, bytes);
    }
    fs::remove_all(state);
    fs::copy(saved_state, state, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  /// RECORD's rows of the package's files (pip's reinstall writes another direct_url.json).
  std::string record() const {
    std::string rows;
    for (auto& line : sitepatch::util::split(testsupport::slurp(dist_info + "/RECORD"), '\n'))
      if (line.rfind("flashinfer/", 0) == 0) rows += line + "\n";
    return rows;
  }
};

}  // namespace

TEST_CASE("reapply --all of two recipes sharing a file, killed at every step: the next command finishes or undoes it",
          "[e2e][crash][reapply]") {
  SharedPair p;
  auto& env = p.env;
  Killer k{env.tmp.path + "/count"};
  std::string pip_record = p.record();
  REQUIRE(env.sp({"apply", p.a, p.b}).status == 0);
  std::string both = env.read(p.rel), both_record = p.record();
  env.venv.install(std::vector<std::string>{
      "--force-reinstall", "--no-deps", e2e::data_wheel("flashinfer-python", "0.5.3", env.tmp.path + "/wheels")});
  REQUIRE(env.pristine());
  p.save();
  REQUIRE(k.run(env, {"reapply", "--all"}, 0).status == 0);
  long steps = k.count();
  REQUIRE(steps > 5);
  REQUIRE(env.read(p.rel) == both);
  for (long at : testsupport::kill_steps(steps, "reapply --all of two recipes")) {
    p.restore();
    auto r = k.run(env, {"reapply", "--all"}, at);
    INFO("killed before step " << at << " of " << steps << "; " << r.err);
    REQUIRE((r.status == 137 || r.status == -9 || r.status == 0));
    if (at % 2) {
      auto again = env.sp({"reapply", "--all"});
      INFO(again.err);
      CHECK(again.status == 0);
      CHECK(again.err.find("neither as it was nor as planned") == std::string::npos);
      CHECK(env.read(p.rel) == both);
      CHECK(p.record() == both_record);
      auto v = env.sp({"verify"});
      INFO(v.out << v.err);
      CHECK(v.status == 0);
    }
    auto back = env.sp({"rollback", "--all"});
    INFO(back.err);
    REQUIRE(back.status == 0);
    CHECK(env.pristine());
    CHECK(p.record() == pip_record);
    CHECK(leftovers(env).empty());
    CHECK(git_fsck_clean(p.state));
  }
}

TEST_CASE("rollback of one of two recipes sharing a file, killed at every step: the next command finishes it",
          "[e2e][crash][rollback]") {
  // b was applied on top of a; either may go first.
  for (std::string gone : {"b", "a"}) {
    SharedPair p;
    auto& env = p.env;
    INFO("rollback " << gone);
    Killer k{env.tmp.path + "/count"};
    std::string pip_record = p.record();
    REQUIRE(env.sp({"apply", gone == "b" ? p.a : p.b}).status == 0);
    std::string kept = env.read(p.rel), kept_record = p.record();
    std::string stays = gone == "b" ? "a" : "b";
    REQUIRE(env.sp({"rollback", stays}).status == 0);
    REQUIRE(env.sp({"apply", p.a}).status == 0);
    REQUIRE(env.sp({"apply", p.b}).status == 0);
    p.save();
    REQUIRE(k.run(env, {"rollback", gone}, 0).status == 0);
    long steps = k.count();
    REQUIRE(steps > 3);
    REQUIRE(env.read(p.rel) == kept);
    for (long at : testsupport::kill_steps(steps, "rollback " + gone + " of two recipes")) {
      p.restore();
      auto r = k.run(env, {"rollback", gone}, at);
      INFO("killed before step " << at << " of " << steps << "; " << r.err);
      REQUIRE((r.status == 137 || r.status == -9 || r.status == 0));
      if (gone == "b") {
        // What verify says of a: its edit is there, as it left it, whatever b's state.
        auto v = env.sp({"verify", "a"});
        INFO(v.out << v.err);
        CHECK(v.status == 0);
        CHECK(v.err.find("adopt") == std::string::npos);
      }
      auto again = env.sp({"rollback", "--missing-ok", gone});
      INFO(again.err);
      CHECK(again.status == 0);
      CHECK(env.read(p.rel) == kept);
      CHECK(p.record() == kept_record);
      CHECK(env.sp({"verify"}).status == 0);
      REQUIRE(env.sp({"rollback", "--all"}).status == 0);
      CHECK(env.pristine());
      CHECK(p.record() == pip_record);
      CHECK(leftovers(env).empty());
    }
  }
}
